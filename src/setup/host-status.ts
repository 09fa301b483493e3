import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { arbeitHookProgram, CLAUDE_HOOKS, isArbeitHook, PROJECT_DIR } from "./claude-config.js";
import { readText } from "./files.js";
import { projectHasArbeit } from "./installation.js";
import { BLOCK_END, BLOCK_START, instructionBlock, instructionKind } from "./instructions.js";
import { isObject, type JsonObject, readJsonObject, SetupError } from "./json-file.js";
import { PLUGIN_FILE } from "./opencode.js";
import { listsArbeitPlugin } from "./opencode-config.js";

/**
 * Which hosts a project has set up for Arbeit, read from their configuration files, and what in
 * that set-up would keep it from working: a half-installed host, or a command or plugin import
 * naming a file that is gone (an installation moved or removed since setup wrote its path).
 */

export interface HostProblem {
  code:
    | "HOST_INCOMPLETE"
    | "HOST_COMMAND_MISSING"
    | "HOST_CONFIG_UNREADABLE"
    | "HOST_PLUGIN_TWICE"
    | "HOST_INSTRUCTIONS_OUTDATED";
  message: string;
  hint?: string;
}

export interface HostStatus {
  host: "claude-code" | "opencode";
  /** Some Arbeit entry is present. */
  installed: boolean;
  /** What is there, in a few words ("4 of 4 hooks, MCP server"). */
  detail: string;
  problems: HostProblem[];
}

/** `read(path)`, or `fallback` with a problem noted when setup would refuse the file. */
function readOr<T>(read: (path: string) => T, path: string, fallback: T, problems: HostProblem[]): T {
  try {
    return read(path);
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    problems.push({ code: "HOST_CONFIG_UNREADABLE", message: error.message });
    return fallback;
  }
}

function readConfig(path: string, problems: HostProblem[]): JsonObject {
  return readOr((file) => readJsonObject(file).value, path, {}, problems);
}

/** The file a program names (not a bare name found on PATH), in the project when it starts with its folder. */
function programFile(program: string, root: string): string | undefined {
  const path = program.startsWith(PROJECT_DIR) ? join(root, program.slice(PROJECT_DIR.length)) : program;
  if (isAbsolute(path)) return path;
  return path.includes("/") && !/\s/.test(path) ? resolve(root, path) : undefined;
}

function missingProgram(host: string, program: string, root: string): HostProblem | undefined {
  const file = programFile(program, root);
  if (file === undefined || existsSync(file)) return undefined;
  return {
    code: "HOST_COMMAND_MISSING",
    message: `${host} runs ${file}, which does not exist (moved or uninstalled since setup wrote it).`,
    hint: "Run `arbeit setup claude` again: it points the hooks and the MCP server at this installation.",
  };
}

/**
 * The instruction block in CLAUDE.md or AGENTS.md: "" when the file has none. A block that is not
 * the one this Arbeit writes names tools or steps that may have changed since.
 */
function instructions(root: string, file: string, setup: string, problems: HostProblem[]): string {
  const path = join(root, file);
  // A folder or a pipe by that name is reported, never opened: a pipe would block the read.
  const text = readOr(readText, path, undefined, problems) ?? "";
  const start = text.indexOf(BLOCK_START);
  if (start === -1) return "";
  const end = text.indexOf(BLOCK_END, start);
  if (end === -1 || text.slice(start, end + BLOCK_END.length) !== instructionBlock(instructionKind(root))) {
    problems.push({
      code: "HOST_INSTRUCTIONS_OUTDATED",
      message: `The Arbeit instructions in ${file} are not the ones this version writes.`,
      hint: `Run \`${setup}\` again: it replaces the block and leaves the rest of ${file} as it is.`,
    });
  }
  return `, instructions in ${file}`;
}

export function claudeStatus(root: string): HostStatus {
  const problems: HostProblem[] = [];
  const settings = readConfig(join(root, ".claude", "settings.json"), problems);
  const mcp = readConfig(join(root, ".mcp.json"), problems);
  const hooks = isObject(settings.hooks) ? settings.hooks : {};
  const programs: string[] = [];
  const missing: string[] = [];
  for (const spec of CLAUDE_HOOKS) {
    const groups = Array.isArray(hooks[spec.event]) ? (hooks[spec.event] as unknown[]) : [];
    const found = groups
      .flatMap((group) => (isObject(group) && Array.isArray(group.hooks) ? group.hooks : []))
      .find((hook) => isArbeitHook(hook, spec.name));
    // The program, not the command: a guarded hook starts with `[`.
    if (found) programs.push(arbeitHookProgram(found.command, spec.name)!);
    else missing.push(spec.event);
  }
  const servers = isObject(mcp.mcpServers) ? mcp.mcpServers : {};
  const server = isObject(servers.arbeit) ? servers.arbeit : undefined;
  const installed = programs.length > 0 || server !== undefined;
  if (installed && (missing.length > 0 || server === undefined)) {
    const gaps = [
      ...(missing.length > 0 ? [`no Arbeit hook for ${missing.join(", ")}`] : []),
      ...(server === undefined ? ["no arbeit MCP server in .mcp.json"] : []),
    ];
    problems.push({
      code: "HOST_INCOMPLETE",
      message: `Claude Code is set up only in part: ${gaps.join("; ")}.`,
      hint: "Run `arbeit setup claude`: it adds what is missing and keeps everything else.",
    });
  }
  const serverCommand = typeof server?.command === "string" ? server.command : undefined;
  for (const program of new Set([...programs, ...(serverCommand ? [serverCommand] : [])])) {
    const problem = missingProgram("Claude Code", program, root);
    if (problem) problems.push(problem);
  }
  const block = instructions(root, "CLAUDE.md", "arbeit setup claude", problems);
  const detail = installed
    ? `${programs.length} of ${CLAUDE_HOOKS.length} hooks${server ? ", MCP server" : ""}${block}`
    : "not set up";
  return { host: "claude-code", installed, detail, problems };
}

export function opencodeStatus(root: string): HostStatus {
  const problems: HostProblem[] = [];
  const file = join(root, PLUGIN_FILE);
  const config = readConfig(join(root, "opencode.json"), problems);
  const listed = listsArbeitPlugin(config);
  const source = readOr(readText, file, undefined, problems);
  const hasFile = source !== undefined;
  if (hasFile) {
    const specifier = /from\s+"([^"]+)"/.exec(source)?.[1];
    const gone =
      specifier?.startsWith("file:") === true
        ? !existsSync(fileURLToPath(specifier))
        : specifier?.startsWith("arbeit") === true && !projectHasArbeit(root);
    if (gone) {
      problems.push({
        code: "HOST_COMMAND_MISSING",
        message: `${PLUGIN_FILE} imports ${specifier}, which this project cannot load.`,
        hint: "Install arbeit in the project (`npm install --save-dev <path to an Arbeit checkout or its packed tarball>`, see README.md), then run `arbeit setup opencode` again.",
      });
    }
  }
  if (hasFile && listed) {
    problems.push({
      code: "HOST_PLUGIN_TWICE",
      message: `OpenCode loads Arbeit twice: from ${PLUGIN_FILE} and from opencode.json's plugin list.`,
      hint: "Keep one: `arbeit setup opencode --remove` takes out what setup wrote (a plugin file of your own is kept), then `arbeit setup opencode --npm` lists the plugin in opencode.json only.",
    });
  }
  const block = instructions(root, "AGENTS.md", "arbeit setup opencode", problems);
  const detail = [hasFile ? `plugin file ${PLUGIN_FILE}` : "", listed ? 'npm plugin "arbeit" in opencode.json' : ""]
    .filter(Boolean)
    .join(", ")
    .concat(hasFile || listed ? block : "");
  return { host: "opencode", installed: hasFile || listed, detail: detail || "not set up", problems };
}
