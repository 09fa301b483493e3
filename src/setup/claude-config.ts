import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { installedCli, projectBin } from "./installation.js";
import { isObject, type JsonObject, SetupError } from "./json-file.js";

/**
 * The Claude Code configuration Arbeit needs, merged into whatever is there: every existing key,
 * hook and server is kept, and a hook or server already present is never added twice. Arbeit's
 * own entries are brought up to date with the command setup was asked to write.
 */

export const CLAUDE_HOOKS = [
  { event: "SessionStart", matcher: "startup|resume|clear|compact", name: "session-start" },
  { event: "UserPromptSubmit", matcher: undefined, name: "user-prompt-submit" },
  // Before each Arbeit MCP call: tells the server when a sub-agent made it. Before each file
  // write (and Bash): refuses an edit of a file another session reserved exclusively.
  {
    event: "PreToolUse",
    matcher: "mcp__arbeit__.*|Write|Edit|MultiEdit|NotebookEdit|Bash",
    name: "pre-tool-use",
    replaces: ["mcp__arbeit__.*"],
  },
  // Files the agent reads and writes, its git commits (Bash), its own task list (TaskCreate,
  // TaskUpdate, TodoWrite) and the plans the person approves (ExitPlanMode). `replaces`: the
  // matchers older versions of setup wrote, brought up to date; any other matcher is the user's
  // choice and stays.
  {
    event: "PostToolUse",
    matcher: "Read|Write|Edit|MultiEdit|NotebookEdit|Bash|TaskCreate|TaskUpdate|TodoWrite|ExitPlanMode",
    name: "post-tool-use",
    replaces: ["Read|Write|Edit|MultiEdit|NotebookEdit", "Read|Write|Edit|MultiEdit|NotebookEdit|Bash"],
  },
  { event: "PostToolUseFailure", matcher: undefined, name: "post-tool-use-failure" },
  { event: "TaskCreated", matcher: undefined, name: "task-created" },
  { event: "TaskCompleted", matcher: undefined, name: "task-completed" },
  { event: "SubagentStart", matcher: undefined, name: "subagent-start" },
  { event: "SubagentStop", matcher: undefined, name: "subagent-stop" },
  { event: "PreCompact", matcher: undefined, name: "pre-compact" },
  { event: "PostCompact", matcher: undefined, name: "post-compact" },
  { event: "SessionEnd", matcher: undefined, name: "session-end" },
] as const;

export const HOOK_TIMEOUT_SECONDS = 10;

/** How Claude Code starts Arbeit: a shell command per hook, and the MCP server's program. */
export interface ClaudeCommand {
  hook(name: string): string;
  mcp: { command: string; args: string[] };
  /** False when the files name a path outside the project, which other machines lack. */
  portable: boolean;
  /** What runs, in a few words, for the report. */
  summary: string;
  /** `--command`, which setup also recognises as its own in the files. */
  explicit?: string;
}

/** How a hook command names the project folder: Claude Code sets it for every hook. */
export const PROJECT_DIR = '"$CLAUDE_PROJECT_DIR"';
const PROJECT_BIN = `${PROJECT_DIR}/node_modules/.bin/arbeit`;
/**
 * The MCP server of a project with its own copy. Claude Code expands no variable in `.mcp.json`'s
 * command, but gives the server CLAUDE_PROJECT_DIR in its environment, so a shell finds the
 * project's launcher from whatever folder Claude Code was started in, without `npx`'s start-up.
 */
const PROJECT_MCP = { command: "sh", args: ["-c", `exec ${PROJECT_BIN} mcp`] };

const shellQuote = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);
const shellUnquote = (word: string) =>
  word.length > 1 && word.startsWith("'") && word.endsWith("'") ? word.slice(1, -1).replaceAll(`'\\''`, "'") : word;

/**
 * A hook that stays silent (exit 0, no output) when its program is not there: the settings are
 * committed, and a teammate who has not installed Arbeit yet must not see every prompt, Read,
 * Edit and Bash call fail. `[` reads no input, so the hook's JSON reaches the program.
 */
const guarded = (program: string, args: string) => `[ ! -x ${program} ] || ${program} ${args}`;
const GUARDED = /^\[ ! -x (.+) \] \|\| (.+)$/s;

/**
 * The command for a project. Hooks run on every Read and Edit, so each must start Arbeit
 * directly: `npx` costs several times the CPU of the program it finds, and may fetch a package
 * of that name from the registry. In order:
 * - `explicit` (--command), split on spaces for the MCP server;
 * - the project's own copy, `$CLAUDE_PROJECT_DIR/node_modules/.bin/arbeit`, for hooks and server;
 * - this installation, by absolute path.
 */
export function claudeCommand(dir: string, explicit?: string): ClaudeCommand {
  if (explicit !== undefined) {
    const trimmed = explicit.trim();
    const [program = "arbeit", ...args] = trimmed.split(/\s+/);
    return {
      hook: (name) => `${trimmed} hook ${name}`,
      mcp: { command: program, args: [...args, "mcp"] },
      portable: true,
      summary: trimmed,
      explicit: trimmed,
    };
  }
  if (projectBin(dir)) {
    return {
      hook: (name) => guarded(PROJECT_BIN, `hook ${name}`),
      mcp: PROJECT_MCP,
      portable: true,
      summary: "the project's node_modules/.bin/arbeit",
    };
  }
  const cli = installedCli();
  return {
    hook: (name) => guarded(shellQuote(cli), `hook ${name}`),
    mcp: { command: cli, args: ["mcp"] },
    portable: false,
    summary: cli,
  };
}

/** Programs setup writes, or wrote in earlier versions, that start no one's Arbeit but Arbeit. */
const KNOWN_PROGRAMS = new Set([PROJECT_BIN, "arbeit", "npx arbeit", "npx --no-install arbeit"]);

/**
 * True for the CLI of an Arbeit installation named by absolute path: its package is `arbeit`, or
 * it is gone (an installation moved or removed since setup wrote its path, which setup repoints).
 */
function isArbeitCli(path: string): boolean {
  if (!isAbsolute(path) || !path.endsWith("/dist/cli/main.js")) return false;
  if (!existsSync(path)) return true;
  try {
    return JSON.parse(readFileSync(join(path, "..", "..", "..", "package.json"), "utf8")).name === "arbeit";
  } catch {
    return false;
  }
}

/** True when `program` (as written in a command) is one setup writes, or `explicit`. */
function isArbeitProgram(program: string, explicit?: string): boolean {
  return KNOWN_PROGRAMS.has(program) || program === explicit || isArbeitCli(shellUnquote(program));
}

/**
 * The program a hook command runs when it is exactly a command setup writes for `name` (guarded
 * or not), else undefined. Anything else is the user's, however much it looks like Arbeit's: a
 * `node tools/x.js hook session-start` or a wrapper around `arbeit hook` is never touched.
 */
export function arbeitHookProgram(command: string, name: string, explicit?: string): string | undefined {
  const suffix = ` hook ${name}`;
  const guard = GUARDED.exec(command);
  const call = guard ? guard[2]! : command;
  if (!call.endsWith(suffix)) return undefined;
  const program = call.slice(0, -suffix.length);
  if (guard && guard[1] !== program) return undefined;
  return isArbeitProgram(program, explicit) ? shellUnquote(program) : undefined;
}

/** An Arbeit hook entry: a command hook whose command is one setup writes (arbeitHookProgram). */
export function isArbeitHook(hook: unknown, name: string, explicit?: string): hook is JsonObject & { command: string } {
  return (
    isObject(hook) &&
    (hook.type === undefined || hook.type === "command") &&
    typeof hook.command === "string" &&
    arbeitHookProgram(hook.command, name, explicit) !== undefined
  );
}

/** The `arbeit` entry of `.mcp.json` when it is one setup writes (or wrote), not a server of the user's. */
export function isArbeitServer(entry: unknown, explicit?: string): entry is JsonObject {
  if (!isObject(entry) || typeof entry.command !== "string" || !Array.isArray(entry.args)) return false;
  if (entry.type !== undefined && entry.type !== "stdio") return false;
  const line = [entry.command, ...entry.args].join(" ");
  if (JSON.stringify([entry.command, ...entry.args]) === JSON.stringify([PROJECT_MCP.command, ...PROJECT_MCP.args]))
    return true;
  if (!line.endsWith(" mcp")) return false;
  const program = line.slice(0, -" mcp".length);
  return KNOWN_PROGRAMS.has(program) || program === explicit || (entry.args.length === 1 && isArbeitCli(entry.command));
}

/**
 * Adds Arbeit's hooks to `.claude/settings.json`, or points the ones there at `command`; returns
 * the events that gained a hook and those whose hook now runs another command.
 */
export function mergeClaudeSettings(
  settings: JsonObject,
  command: ClaudeCommand,
): { value: JsonObject; added: string[]; updated: string[] } {
  const hooks = settings.hooks ?? {};
  if (!isObject(hooks)) throw new SetupError(`"hooks" in .claude/settings.json must be an object.`);
  const merged: JsonObject = { ...hooks };
  const added: string[] = [];
  const updated: string[] = [];
  for (const spec of CLAUDE_HOOKS) {
    const groups = merged[spec.event] ?? [];
    if (!Array.isArray(groups))
      throw new SetupError(`"hooks.${spec.event}" in .claude/settings.json must be an array.`);
    const wanted = command.hook(spec.name);
    let found = false;
    let changed = false;
    const next = groups.map((group) => {
      if (!isObject(group) || !Array.isArray(group.hooks)) return group;
      const hooks = group.hooks.map((hook) => {
        if (!isArbeitHook(hook, spec.name, command.explicit)) return hook;
        found = true;
        if (hook.command === wanted) return hook;
        changed = true;
        return { ...hook, command: wanted };
      });
      const outdated = "replaces" in spec && (spec.replaces as readonly unknown[]).includes(group.matcher);
      if (outdated && hooks.some((hook) => isArbeitHook(hook, spec.name, command.explicit))) {
        changed = true;
        return { ...group, matcher: spec.matcher, hooks };
      }
      return { ...group, hooks };
    });
    if (changed) {
      merged[spec.event] = next;
      updated.push(spec.event);
    } else if (!found) {
      const group = {
        ...(spec.matcher ? { matcher: spec.matcher } : {}),
        hooks: [{ type: "command", command: wanted, timeout: HOOK_TIMEOUT_SECONDS }],
      };
      merged[spec.event] = [...groups, group];
      added.push(spec.event);
    }
  }
  const touched = added.length + updated.length > 0;
  return { value: touched ? { ...settings, hooks: merged } : settings, added, updated };
}

/**
 * Adds the `arbeit` MCP server to `.mcp.json`, or points the one setup wrote at `command`. An
 * `arbeit` entry setup did not write (a remote service, a wrapper) is the user's: it stays (`kept`).
 */
export function mergeMcpConfig(
  config: JsonObject,
  command: ClaudeCommand,
): { value: JsonObject; action: "added" | "updated" | "unchanged" | "kept" } {
  const servers = config.mcpServers ?? {};
  if (!isObject(servers)) throw new SetupError(`"mcpServers" in .mcp.json must be an object.`);
  const existing = servers.arbeit;
  if (existing !== undefined && !isArbeitServer(existing, command.explicit)) return { value: config, action: "kept" };
  const current = isObject(existing) ? existing : {};
  if (current.command === command.mcp.command && JSON.stringify(current.args) === JSON.stringify(command.mcp.args)) {
    return { value: config, action: "unchanged" };
  }
  return {
    // Other keys of an existing entry (env) are the user's and stay.
    value: { ...config, mcpServers: { ...servers, arbeit: { ...current, ...command.mcp } } },
    action: existing === undefined ? "added" : "updated",
  };
}

/**
 * Takes Arbeit's hooks out of `.claude/settings.json`, recognised as merge recognises them, and
 * nothing else: a group keeps its other hooks, and only a group, event or `hooks` that removal
 * leaves empty goes with them. Returns the events that lost a hook.
 */
export function removeClaudeHooks(settings: JsonObject, explicit?: string): { value: JsonObject; removed: string[] } {
  const hooks = settings.hooks;
  if (!isObject(hooks)) return { value: settings, removed: [] };
  const remaining: JsonObject = { ...hooks };
  const removed: string[] = [];
  for (const spec of CLAUDE_HOOKS) {
    const groups = remaining[spec.event];
    if (!Array.isArray(groups)) continue;
    let found = false;
    const kept: unknown[] = [];
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        kept.push(group);
        continue;
      }
      const others = group.hooks.filter((hook) => !isArbeitHook(hook, spec.name, explicit));
      if (others.length === group.hooks.length) kept.push(group);
      else {
        found = true;
        if (others.length > 0) kept.push({ ...group, hooks: others });
      }
    }
    if (!found) continue;
    removed.push(spec.event);
    if (kept.length > 0) remaining[spec.event] = kept;
    else delete remaining[spec.event];
  }
  if (removed.length === 0) return { value: settings, removed };
  const value: JsonObject = { ...settings, hooks: remaining };
  if (Object.keys(remaining).length === 0) delete value.hooks;
  return { value, removed };
}

/**
 * Takes the `arbeit` server out of `.mcp.json` when setup wrote it (`kept`: an entry of the
 * user's by that name stays), and `mcpServers` if it was the only one.
 */
export function removeMcpServer(
  config: JsonObject,
  explicit?: string,
): { value: JsonObject; removed: boolean; kept: boolean } {
  const servers = config.mcpServers;
  if (!isObject(servers) || !("arbeit" in servers)) return { value: config, removed: false, kept: false };
  if (!isArbeitServer(servers.arbeit, explicit)) return { value: config, removed: false, kept: true };
  const { arbeit: _, ...others } = servers;
  const value: JsonObject = { ...config, mcpServers: others };
  if (Object.keys(others).length === 0) delete value.mcpServers;
  return { value, removed: true, kept: false };
}
