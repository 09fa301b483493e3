import { type JsonObject, SetupError } from "./json-file.js";

const OPENCODE_SCHEMA = "https://opencode.ai/config.json";

/** The package name of an opencode.json plugin entry: "arbeit", "arbeit@1.2.0", ["arbeit", {...}]. */
function packageOf(entry: unknown): string | undefined {
  const spec = Array.isArray(entry) ? entry[0] : entry;
  if (typeof spec !== "string") return undefined;
  const at = spec.lastIndexOf("@");
  return at > 0 ? spec.slice(0, at) : spec;
}

export function listsArbeitPlugin(config: JsonObject): boolean {
  return Array.isArray(config.plugin) && config.plugin.some((entry) => packageOf(entry) === "arbeit");
}

/** Adds the npm plugin to opencode.json's `plugin` list unless it is listed already. */
export function mergeOpencodeConfig(config: JsonObject): { value: JsonObject; added: boolean } {
  const plugins = config.plugin ?? [];
  if (!Array.isArray(plugins)) throw new SetupError(`"plugin" in opencode.json must be an array.`);
  if (listsArbeitPlugin(config)) return { value: config, added: false };
  // A new file gets the schema reference OpenCode's own docs start with.
  const schema = Object.keys(config).length === 0 ? { $schema: OPENCODE_SCHEMA } : {};
  return { value: { ...schema, ...config, plugin: [...plugins, "arbeit"] }, added: true };
}

/** The local plugin file: one re-export of the installed package's OpenCode entry. */
export function pluginFileSource(specifier: string): string {
  return [
    "// Arbeit's OpenCode plugin, written by `arbeit setup opencode`: the arbeit_* tools, file tracking",
    "// for the session's active task, and its briefing kept across compaction (docs/opencode.md).",
    `export { default } from ${JSON.stringify(specifier)};`,
    "",
  ].join("\n");
}

/** Takes every entry of the arbeit package out of opencode.json's `plugin` list. */
export function removeOpencodePlugin(config: JsonObject): { value: JsonObject; removed: boolean } {
  if (!Array.isArray(config.plugin)) return { value: config, removed: false };
  const others = config.plugin.filter((entry) => packageOf(entry) !== "arbeit");
  if (others.length === config.plugin.length) return { value: config, removed: false };
  const value: JsonObject = { ...config, plugin: others };
  if (others.length === 0) delete value.plugin;
  return { value, removed: true };
}

/** Nothing left but the schema reference setup starts a new file with. */
export function isBareOpencodeConfig(config: JsonObject): boolean {
  return Object.entries(config).every(([key, value]) => key === "$schema" && value === OPENCODE_SCHEMA);
}

/** True for a plugin file exactly as setup writes it, whichever installation it imports. */
export function isSetupPluginFile(source: string): boolean {
  const from = /^export \{ default \} from (".*");$/m.exec(source)?.[1];
  if (from === undefined) return false;
  try {
    const specifier = JSON.parse(from);
    return typeof specifier === "string" && source === pluginFileSource(specifier);
  } catch {
    return false;
  }
}
