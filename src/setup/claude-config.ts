import { isObject, type JsonObject, SetupError } from "./json-file.js";

/**
 * The Claude Code configuration Arbeit needs, merged into whatever is there: every existing key,
 * hook and server is kept, and a hook or server already present is never added twice.
 */

export const CLAUDE_HOOKS = [
  { event: "SessionStart", matcher: "startup|resume|clear|compact", name: "session-start" },
  // Before each Arbeit MCP call: tells the server when a sub-agent made it.
  { event: "PreToolUse", matcher: "mcp__arbeit__.*", name: "pre-tool-use" },
  { event: "PostToolUse", matcher: "Read|Write|Edit|MultiEdit|NotebookEdit", name: "post-tool-use" },
  { event: "PreCompact", matcher: undefined, name: "pre-compact" },
] as const;

export const HOOK_TIMEOUT_SECONDS = 10;

/** `npx arbeit` by default: found in the project's node_modules, else fetched once by npx. */
export const DEFAULT_COMMAND = "npx arbeit";

function hasArbeitHook(groups: unknown[], name: string): boolean {
  return groups.some(
    (group) =>
      isObject(group) &&
      Array.isArray(group.hooks) &&
      group.hooks.some(
        (hook) => isObject(hook) && typeof hook.command === "string" && hook.command.includes(`arbeit hook ${name}`),
      ),
  );
}

/** Adds Arbeit's hooks to `.claude/settings.json`; returns the events that gained one. */
export function mergeClaudeSettings(
  settings: JsonObject,
  command: string = DEFAULT_COMMAND,
): { value: JsonObject; added: string[] } {
  const hooks = settings.hooks ?? {};
  if (!isObject(hooks)) throw new SetupError(`"hooks" in .claude/settings.json must be an object.`);
  const merged: JsonObject = { ...hooks };
  const added: string[] = [];
  for (const spec of CLAUDE_HOOKS) {
    const groups = merged[spec.event] ?? [];
    if (!Array.isArray(groups))
      throw new SetupError(`"hooks.${spec.event}" in .claude/settings.json must be an array.`);
    if (hasArbeitHook(groups, spec.name)) continue;
    const group = {
      ...(spec.matcher ? { matcher: spec.matcher } : {}),
      hooks: [{ type: "command", command: `${command} hook ${spec.name}`, timeout: HOOK_TIMEOUT_SECONDS }],
    };
    merged[spec.event] = [...groups, group];
    added.push(spec.event);
  }
  return { value: added.length > 0 ? { ...settings, hooks: merged } : settings, added };
}

/**
 * The MCP server entry for `command` (`npx arbeit` -> npx with args [arbeit, mcp]), so that the
 * server runs the same Arbeit as the hooks. The command is split on spaces.
 */
export function mcpServerEntry(command: string = DEFAULT_COMMAND): { command: string; args: string[] } {
  const [program = "npx", ...args] = command.trim().split(/\s+/);
  return { command: program, args: [...args, "mcp"] };
}

/** Adds the `arbeit` MCP server to `.mcp.json` unless one by that name is configured. */
export function mergeMcpConfig(
  config: JsonObject,
  command: string = DEFAULT_COMMAND,
): { value: JsonObject; added: boolean } {
  const servers = config.mcpServers ?? {};
  if (!isObject(servers)) throw new SetupError(`"mcpServers" in .mcp.json must be an object.`);
  if ("arbeit" in servers) return { value: config, added: false };
  return {
    value: {
      ...config,
      mcpServers: { ...servers, arbeit: mcpServerEntry(command) },
    },
    added: true,
  };
}
