import type { Caller } from "../service/caller.js";
import type { HookPayload } from "./hook-payload.js";
import { subagentSession } from "./subagent-calls.js";

/**
 * What every Claude Code command hook shares (`arbeit hook <name>`, src/claude/hooks.ts): the
 * hooks' names, their settings and outcome, and whom a call acts for. Kept apart so that the
 * PreToolUse hook's quick path (src/claude/pre-tool-use.ts) loads no more than it needs.
 */

export const HOOK_NAMES = [
  "session-start",
  "user-prompt-submit",
  "pre-tool-use",
  "post-tool-use",
  "post-tool-use-failure",
  "task-created",
  "task-completed",
  "subagent-start",
  "subagent-stop",
  "pre-compact",
  "post-compact",
  "session-end",
] as const;
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
