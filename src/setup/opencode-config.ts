import { type JsonObject, SetupError } from "./json-file.js";

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
  const schema = Object.keys(config).length === 0 ? { $schema: "https://opencode.ai/config.json" } : {};
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
