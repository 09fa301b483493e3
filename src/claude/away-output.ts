import type { ServiceAwayError } from "../remote/hook-delivery.js";
import { awayText, noteUncheckedEdit, takeNotice } from "../remote/service-away.js";
import type { ServiceTarget } from "../remote/target.js";
import type { HookName, HookOutcome } from "./hook-common.js";

/**
 * What a Claude Code hook answers when the service cannot be asked (src/remote/hook-delivery.ts),
 * and the notices it adds when the service answers: the agent is told once per outage, in the
 * next hook whose output reaches the model, that coordination is off (and since when, and what
 * that means), and once that it is back. The edit check answers without the service: it lets the
 * edit through, unchecked and noted, or refuses it when the project fails closed.
 */

/** The hooks whose `additionalContext` reaches the model, with the event name Claude Code requires. */
const CONTEXT_EVENTS: Partial<Record<HookName, string>> = {
  "session-start": "SessionStart",
  "user-prompt-submit": "UserPromptSubmit",
  "pre-tool-use": "PreToolUse",
  "post-tool-use": "PostToolUse",
  "post-tool-use-failure": "PostToolUseFailure",
  "subagent-start": "SubagentStart",
};

/** `stdout` with `context` added to its additionalContext (a hook's JSON answer, or none). */
export function withContext(name: HookName, stdout: string, context: string | undefined): string {
  const event = CONTEXT_EVENTS[name];
  if (!context || !event) return stdout;
  let answer: { hookSpecificOutput?: Record<string, unknown> } = {};
  if (stdout.trim() !== "") {
    try {
      answer = JSON.parse(stdout);
    } catch {
      return stdout;
    }
  }
  const output: Record<string, unknown> = { hookEventName: event, ...answer.hookSpecificOutput };
  const before = typeof output.additionalContext === "string" ? `${output.additionalContext}\n\n` : "";
  return `${JSON.stringify({ ...answer, hookSpecificOutput: { ...output, additionalContext: `${before}${context}` } })}\n`;
}

/** After a step the service answered: what the session has not been told yet (the outage's end). */
export function noticeAfter(
  name: HookName,
  stdout: string,
  target: ServiceTarget,
  session: string | null,
  failClosed: boolean,
): string {
  if (!target.folder || !CONTEXT_EVENTS[name]) return stdout;
  return withContext(name, stdout, takeNotice(target.folder, session, failClosed));
}

/** The hook's answer without the service. `paths`: the files an edit check was about. */
export function awayOutcome(
  name: HookName,
  error: ServiceAwayError,
  target: ServiceTarget,
  session: string | null,
  paths: string[] | undefined,
  failClosed: boolean,
): HookOutcome {
  const queued = (error.details as { queued?: boolean } | undefined)?.queued === true;
  const stderr = `arbeit: ${name} hook skipped: ${error.message}${queued ? " (kept in .arbeit/outbox.jsonl for later)" : ""}\n`;
  const folder = target.folder;
  if (name === "pre-tool-use" && paths) {
    if (folder) noteUncheckedEdit(folder, { session, paths, decision: failClosed ? "denied" : "allowed" });
    if (failClosed) {
      if (folder) takeNotice(folder, session, failClosed);
      const reason = error.away
        ? awayText(error.away, true)
        : `Arbeit: ${error.message} This project's edit check fails closed: file edits are refused until the service can check them.`;
      const deny = { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason };
      return { stdout: `${JSON.stringify({ hookSpecificOutput: deny })}\n`, stderr };
    }
  }
  if (!folder || !CONTEXT_EVENTS[name]) return { stdout: "", stderr };
  return { stdout: withContext(name, "", takeNotice(folder, session, failClosed)), stderr };
}
