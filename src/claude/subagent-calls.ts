import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fitName } from "../domain/identity.js";

/**
 * Which Claude Code sub-agent made an MCP call. Claude Code runs one `arbeit mcp` server per
 * conversation, with the conversation's session id, and an MCP request does not say which agent
 * made it: only its `_meta["claudecode/toolUseId"]`. The PreToolUse hook, which Claude Code runs
 * (and waits for) before the call reaches the server, does see the sub-agent (`agent_id`) beside
 * that same tool_use_id. So the hook leaves a note `<arbeit dir>/subagent-calls/<tool_use_id>`
 * holding the agent id, and the server takes it (reads and deletes it) when the call arrives:
 * the call then acts as the sub-agent's own session. Calls of the main conversation leave no note.
 */
const FOLDER = "subagent-calls";
/** Notes of calls that never reached the server (denied, interrupted) are swept after this. */
const STALE_MS = 10 * 60_000;
const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Called by the PreToolUse hook for an MCP call a sub-agent makes. */
export function noteSubagentCall(arbeitDir: string, toolUseId: string, agentId: string, now = Date.now()): boolean {
  if (!TOOL_USE_ID.test(toolUseId) || !AGENT_ID.test(agentId)) return false;
  const folder = join(arbeitDir, FOLDER);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const note = join(folder, toolUseId);
  // Opening a named pipe left under a note's name would wait for a reader forever: replace it.
  if (lstatSync(note, { throwIfNoEntry: false })?.isFile() === false) rmSync(note, { recursive: true, force: true });
  writeFileSync(note, agentId, { mode: 0o600 });
  sweep(folder, now);
  return true;
}

/** Called by the MCP server for each call: the sub-agent that made it, if a note says so. */
export function takeSubagentCall(arbeitDir: string, toolUseId: unknown): string | undefined {
  if (typeof toolUseId !== "string" || !TOOL_USE_ID.test(toolUseId)) return undefined;
  const note = join(arbeitDir, FOLDER, toolUseId);
  let agentId: string;
  try {
    // Only a regular file is a note: reading a named pipe left there would wait for a writer forever.
    if (!lstatSync(note).isFile()) return undefined;
    agentId = readFileSync(note, "utf8").trim();
  } catch {
    return undefined;
  }
  rmSync(note, { force: true });
  return AGENT_ID.test(agentId) ? agentId : undefined;
}

function sweep(folder: string, now: number): void {
  for (const name of readdirSync(folder)) {
    try {
      if (now - statSync(join(folder, name)).mtimeMs > STALE_MS) rmSync(join(folder, name), { force: true });
    } catch {
      // Taken by the server meanwhile.
    }
  }
}

/**
 * A sub-agent's session: its own, within its conversation's (`<session>/<agent id>`). A long
 * conversation session with a long agent id is cut to a name's length, a hash keeping sub-agents
 * apart.
 */
export function subagentSession(session: string, agentId: string): string {
  return fitName(`${session}/${agentId}`);
}
