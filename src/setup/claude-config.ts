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
  // Before each Arbeit MCP call: tells the server when a sub-agent made it.
  { event: "PreToolUse", matcher: "mcp__arbeit__.*", name: "pre-tool-use" },
  // Files the agent reads and writes, and its git commits (Bash). `replaces`: the matchers older
  // versions of setup wrote, brought up to date; any other matcher is the user's choice and stays.
  {
    event: "PostToolUse",
    matcher: "Read|Write|Edit|MultiEdit|NotebookEdit|Bash",
    name: "post-tool-use",
    replaces: ["Read|Write|Edit|MultiEdit|NotebookEdit"],
  },
  { event: "PostToolUseFailure", matcher: undefined, name: "post-tool-use-failure" },
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
}

/** How a hook command names the project folder: Claude Code sets it for every hook. */
export const PROJECT_DIR = '"$CLAUDE_PROJECT_DIR"';

const shellQuote = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

/**
 * The command for a project. Hooks run on every Read and Edit, so each must start Arbeit
 * directly: `npx` costs several times the CPU of the program it finds, and may fetch a package
 * of that name from the registry. In order:
 * - `explicit` (--command), split on spaces for the MCP server;
 * - the project's own copy: hooks run `$CLAUDE_PROJECT_DIR/node_modules/.bin/arbeit`, and the
 *   server, started once per conversation from whatever folder Claude Code runs in, `npx
 *   --no-install arbeit`, which finds the project's copy from any subfolder and never installs;
 * - this installation, by absolute path.
 */
export function claudeCommand(dir: string, explicit?: string): ClaudeCommand {
  if (explicit !== undefined) {
    const [program = "arbeit", ...args] = explicit.trim().split(/\s+/);
    return {
      hook: (name) => `${explicit.trim()} hook ${name}`,
      mcp: { command: program, args: [...args, "mcp"] },
      portable: true,
      summary: explicit.trim(),
    };
  }
  if (projectBin(dir)) {
    return {
      hook: (name) => `${PROJECT_DIR}/node_modules/.bin/arbeit hook ${name}`,
      mcp: { command: "npx", args: ["--no-install", "arbeit", "mcp"] },
      portable: true,
      summary: "the project's node_modules/.bin/arbeit",
    };
  }
  const cli = installedCli();
  return {
    hook: (name) => `${shellQuote(cli)} hook ${name}`,
    mcp: { command: cli, args: ["mcp"] },
    portable: false,
    summary: cli,
  };
}

/** An Arbeit hook however it was written: `npx arbeit`, a path to the CLI, a global `arbeit`. */
export function isArbeitHook(hook: unknown, name: string): hook is JsonObject & { command: string } {
  return (
    isObject(hook) &&
    typeof hook.command === "string" &&
    new RegExp(`(?:arbeit|main\\.js)['"]?\\s+hook\\s+${name}\\s*$`).test(hook.command)
  );
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
        if (!isArbeitHook(hook, spec.name)) return hook;
        found = true;
        if (hook.command === wanted) return hook;
        changed = true;
        return { ...hook, command: wanted };
      });
      const outdated = "replaces" in spec && (spec.replaces as readonly unknown[]).includes(group.matcher);
      if (outdated && hooks.some((hook) => isArbeitHook(hook, spec.name))) {
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

/** Adds the `arbeit` MCP server to `.mcp.json`, or points the one there at `command`. */
export function mergeMcpConfig(
  config: JsonObject,
  command: ClaudeCommand,
): { value: JsonObject; action: "added" | "updated" | "unchanged" } {
  const servers = config.mcpServers ?? {};
  if (!isObject(servers)) throw new SetupError(`"mcpServers" in .mcp.json must be an object.`);
  const existing = servers.arbeit;
  const current = isObject(existing) ? existing : {};
  if (current.command === command.mcp.command && JSON.stringify(current.args) === JSON.stringify(command.mcp.args)) {
    return { value: config, action: "unchanged" };
  }
  return {
    // Other keys of an existing entry (env, type) are the user's and stay.
    value: { ...config, mcpServers: { ...servers, arbeit: { ...current, ...command.mcp } } },
    action: existing === undefined ? "added" : "updated",
  };
}

/**
 * Takes Arbeit's hooks out of `.claude/settings.json`, recognised as merge recognises them, and
 * nothing else: a group keeps its other hooks, and only a group, event or `hooks` that removal
 * leaves empty goes with them. Returns the events that lost a hook.
 */
export function removeClaudeHooks(settings: JsonObject): { value: JsonObject; removed: string[] } {
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
      const others = group.hooks.filter((hook) => !isArbeitHook(hook, spec.name));
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

/** Takes the `arbeit` server out of `.mcp.json`, and `mcpServers` if it was the only one. */
export function removeMcpServer(config: JsonObject): { value: JsonObject; removed: boolean } {
  const servers = config.mcpServers;
  if (!isObject(servers) || !("arbeit" in servers)) return { value: config, removed: false };
  const { arbeit: _, ...others } = servers;
  const value: JsonObject = { ...config, mcpServers: others };
  if (Object.keys(others).length === 0) delete value.mcpServers;
  return { value, removed: true };
}
