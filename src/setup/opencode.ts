import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { rememberCreated, toBeCreated } from "./created-files.js";
import { checkWritable, readText, removeFile } from "./files.js";
import { projectHasArbeit } from "./installation.js";
import { addInstructions, removeInstructions } from "./instruction-file.js";
import { readJsonObject, SetupError, writeJson, writeRemainder } from "./json-file.js";
import {
  isBareOpencodeConfig,
  isSetupPluginFile,
  listsArbeitPlugin,
  mergeOpencodeConfig,
  pluginFileSource,
  removeOpencodePlugin,
} from "./opencode-config.js";
import {
  checkStoreCreatable,
  ensureInitialized,
  newReport,
  noteDatabaseKept,
  record,
  type SetupReport,
} from "./report.js";

export const PLUGIN_FILE = join(".opencode", "plugin", "arbeit.js");
const OTHER_PLUGIN_FILES = ["plugin/arbeit.ts", "plugins/arbeit.js", "plugins/arbeit.ts"].map((file) =>
  join(".opencode", file),
);

/**
 * How the local plugin file imports Arbeit: by package name when the project can resolve it (a
 * project dependency: portable, commit it), else by the absolute path of this installation.
 */
export function pluginSpecifier(dir: string): { specifier: string; portable: boolean } {
  if (projectHasArbeit(dir)) return { specifier: "arbeit/opencode", portable: true };
  const entry = fileURLToPath(new URL("../opencode/server.js", import.meta.url));
  return { specifier: pathToFileURL(entry).href, portable: false };
}

export interface SetupOpencodeOptions {
  dir: string;
  /** List the npm package in opencode.json (OpenCode installs it) instead of a local file. */
  npm?: boolean;
  /** Replace (with --remove: delete) a local plugin file that differs from the one setup writes. */
  force?: boolean;
}

/**
 * `arbeit setup opencode`: the local plugin file, or with --npm the opencode.json entry, and the
 * instruction block in AGENTS.md, which is checked first so that a refusal there writes nothing.
 */
export async function setupOpencode(options: SetupOpencodeOptions): Promise<SetupReport> {
  const report = newReport("opencode", options.dir);
  const configPath = join(options.dir, "opencode.json");
  const creating = [configPath, join(options.dir, PLUGIN_FILE), join(options.dir, "AGENTS.md")].flatMap((path) =>
    toBeCreated(options.dir, path),
  );
  const localFiles = [PLUGIN_FILE, ...OTHER_PLUGIN_FILES].filter((file) => existsSync(join(options.dir, file)));
  const instructions = addInstructions(join(options.dir, "AGENTS.md"));
  if (instructions.writes) checkWritable(instructions.path, options.dir);
  checkStoreCreatable(options.dir);

  if (options.npm) {
    if (!existsSync(configPath) && existsSync(join(options.dir, "opencode.jsonc"))) {
      throw new SetupError(
        `This project configures OpenCode in opencode.jsonc; add "arbeit" to its "plugin" list by hand.`,
      );
    }
    const file = readJsonObject(configPath);
    const merged = mergeOpencodeConfig(file.value);
    if (merged.added) checkWritable(configPath, options.dir);
    if (merged.added) record(report, configPath, writeJson(file, merged.value), 'plugin "arbeit"');
    else record(report, configPath, "unchanged", 'plugin "arbeit" already listed');
    if (localFiles.length > 0) {
      report.notes.push(
        `${localFiles.join(", ")} also loads Arbeit, so OpenCode loads the plugin twice. Setup left it as it is: look at what it holds, and keep one of the two.`,
      );
    }
  } else {
    pluginFileStep(report, options)(report);
    if (existsSync(configPath) && listsArbeitPlugin(readJsonObject(configPath).value)) {
      report.notes.push(`opencode.json also lists the "arbeit" npm plugin; remove one so it is not loaded twice.`);
    }
  }
  instructions(report);
  await ensureInitialized(report);
  rememberCreated(
    options.dir,
    creating.filter((path) => existsSync(path)),
  );
  return report;
}

/**
 * `arbeit setup opencode --remove`: the plugin file when it is the one setup writes (another is
 * the user's, kept unless --force), the arbeit entries of opencode.json's `plugin` list, and the
 * block in AGENTS.md.
 */
export function removeOpencode(options: { dir: string; force?: boolean }): SetupReport {
  const report = newReport("opencode", options.dir, "remove");
  const pluginPath = join(options.dir, PLUGIN_FILE);
  const source = readText(pluginPath);
  const configFile = readJsonObject(join(options.dir, "opencode.json"));
  const config = removeOpencodePlugin(configFile.value);
  const instructions = removeInstructions(join(options.dir, "AGENTS.md"));
  if (config.removed) checkWritable(configFile.path, options.dir);
  if (instructions.writes) checkWritable(instructions.path, options.dir);

  if (source === undefined) record(report, pluginPath, "unchanged", "no plugin file");
  else if (isSetupPluginFile(source) || options.force) {
    removeFile(pluginPath, options.dir, true);
    record(report, pluginPath, "removed", isSetupPluginFile(source) ? "written by setup" : "--force");
  } else {
    record(report, pluginPath, "unchanged", "not written by setup");
    report.notes.push(`${PLUGIN_FILE} is not the file setup writes, so it is taken as yours and was kept.`);
  }
  if (config.removed) {
    const action = writeRemainder(configFile, config.value, options.dir, isBareOpencodeConfig);
    record(report, configFile.path, action, 'plugin "arbeit"');
  } else record(report, configFile.path, "unchanged", 'no plugin "arbeit"');
  instructions(report);
  noteDatabaseKept(report);
  return report;
}

/** Works out the plugin file (refusing one of other content without --force) and checks it can be written. */
function pluginFileStep(report: SetupReport, options: SetupOpencodeOptions): (report: SetupReport) => void {
  const path = join(options.dir, PLUGIN_FILE);
  const { specifier, portable } = pluginSpecifier(options.dir);
  const source = pluginFileSource(specifier);
  const existing = readText(path);
  if (!portable) {
    report.notes.push(
      `arbeit is not installed in this project, so ${PLUGIN_FILE} imports it from ${specifier}. ` +
        "For a setup you can commit, install arbeit in the project (`npm install --save-dev <path to an Arbeit checkout or its packed tarball>`, see README.md) and run `arbeit setup opencode` again.",
    );
  }
  if (existing === source) return (report) => record(report, path, "unchanged");
  // A file setup wrote for another installation is setup's to update; any other is the user's.
  if (existing !== undefined && !isSetupPluginFile(existing) && !options.force) {
    throw new SetupError(
      `${path} exists and is not the file setup writes; it was left as it is. To load Arbeit through opencode.json instead, run \`arbeit setup opencode --npm\`.`,
    );
  }
  checkWritable(path, options.dir);
  return (report) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, source);
    record(report, path, existing === undefined ? "created" : "updated", `imports ${specifier}`);
  };
}
