import { dirname } from "node:path";
import { activeBriefingText } from "../fragments/briefing-text.js";
import { sessionStartContext } from "../fragments/session-start.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { locate, openProject } from "../service/project.js";
import { type HookPayload, parsePayload, projectDirOf, touchFromPostToolUse } from "./hook-payload.js";
import { noteSubagentCall, subagentSession } from "./subagent-calls.js";

/**
 * Claude Code command hooks (`arbeit hook <name>`, stdin JSON). A hook must never break the
 * user's session: every Arbeit-side problem becomes a note on stderr with exit 0, and a project
 * without Arbeit gets no output at all.
 */

export const HOOK_NAMES = ["session-start", "pre-tool-use", "post-tool-use", "pre-compact"] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface HookSettings {
  /** --db / ARBEIT_DB. */
  db?: string | undefined;
  /** --agent / ARBEIT_AGENT; Claude Code by default. */
  agent?: string | undefined;
  /** --list / ARBEIT_LIST. */
  list?: string | undefined;
}

export interface HookOutcome {
  stdout: string;
  stderr: string;
}

export const CLAUDE_AGENT = "claude-code";

type Handler = (service: ArbeitService, payload: HookPayload, caller: Caller, dir: string) => Promise<string>;

const HANDLERS: Record<HookName, Handler> = {
  "session-start": async (service, _payload, caller) => {
    const additionalContext = await sessionStartContext(service, caller);
    return `${JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext } })}\n`;
  },
  // Handled before the store is opened (see runClaudeHook): it only leaves a note for the server.
  "pre-tool-use": async () => "",
  "post-tool-use": async (service, payload, caller, dir) => {
    const touch = touchFromPostToolUse(payload, dir);
    if (touch && caller.session) await service.trackFile(touch, caller);
    return "";
  },
  // PreCompact: plain stdout is appended to the compaction instructions.
  "pre-compact": async (service, _payload, caller) => {
    await collectExpiredMemory(service, caller);
    if (!caller.session) return "";
    const text = await activeBriefingText(service, caller.session);
    return text ? `Preserve this task briefing in the summary.\n${text}\n` : "";
  },
};

/**
 * Deletes expired memory for good where a conversation pauses (PreCompact, and the end of a
 * session), so expired entries do not pile up in a project whose agents rarely write memory. It is
 * housekeeping: a failure (a read-only store, a busy one) is ignored and never costs the hook its
 * output.
 */
export async function collectExpiredMemory(service: ArbeitService, caller: Caller): Promise<void> {
  await service.memory({ action: "gc" }, caller).catch(() => undefined);
}

/**
 * The conversation's session is Claude Code's session id, the same as CLAUDE_CODE_SESSION_ID in
 * the MCP server it starts, so hooks and MCP calls of one conversation are one session. A
 * sub-agent's tool calls carry its agent_id (and the parent's session_id): they act as a session
 * of their own, `<session>/<agent_id>`, which records against the parent's task while it has no
 * work of its own.
 */
export function hookSession(payload: HookPayload): Pick<Caller, "session" | "parents"> {
  const session = payload.session_id ?? null;
  if (session === null || payload.agent_id === undefined) return { session };
  return { session: subagentSession(session, payload.agent_id), parents: [session] };
}

export async function runClaudeHook(
  name: HookName,
  input: string,
  settings: HookSettings,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<HookOutcome> {
  let service: ArbeitService | undefined;
  try {
    const payload = parsePayload(input);
    const dir = projectDirOf(payload, env, cwd);
    const where = { cwd: dir, db: settings.db };
    const location = locate(where);
    if (!location) return { stdout: "", stderr: "" };
    if (name === "pre-tool-use") {
      // Runs before every Arbeit MCP call: it opens no database, only notes a sub-agent's call.
      if (payload.agent_id && payload.tool_use_id)
        noteSubagentCall(dirname(location.dbPath), payload.tool_use_id, payload.agent_id);
      return { stdout: "", stderr: "" };
    }
    service = await openProject(where);
    const caller: Caller = {
      ...hookSession(payload),
      agent: settings.agent ?? CLAUDE_AGENT,
      ...(settings.list ? { list_id: settings.list } : {}),
    };
    return { stdout: await HANDLERS[name](service, payload, caller, dir), stderr: "" };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { stdout: "", stderr: `arbeit: ${name} hook skipped: ${message}\n` };
  } finally {
    await service?.close().catch(() => undefined);
  }
}
