import { ArbeitError } from "../domain/errors.js";
import type { HookOutcome } from "./hook-common.js";

/** The events whose hooks may add to the agent's context (Claude Code's hookSpecificOutput). */
const CONTEXT_EVENTS = new Set(["SessionStart", "UserPromptSubmit", "PostToolUse"]);

/**
 * A hook the service refused because this client's release and the service's do not work
 * together is not passed over like a passing outage: every hook of every session would be refused
 * the same way until someone upgrades. Its answer shows the person the refusal (Claude Code shows
 * a hook's systemMessage) and, where the event allows it, tells the agent that Arbeit's hooks
 * record nothing until then. Undefined for any other failure.
 */
export function shownRefusal(name: string, event: string | undefined, error: unknown): HookOutcome | undefined {
  if (!(error instanceof ArbeitError) || error.code !== "VERSION_UNSUPPORTED") return undefined;
  const advice = error.suggestions[0] ? ` ${error.suggestions[0]}` : "";
  const message = `Arbeit: the service refused the ${name} hook: ${error.message}${advice}`;
  const context =
    event && CONTEXT_EVENTS.has(event)
      ? {
          hookSpecificOutput: {
            hookEventName: event,
            additionalContext: `${message} Until then Arbeit's hooks record nothing for this session (no progress, file touches or commits), and its tools answer with the same refusal.`,
          },
        }
      : {};
  return { stdout: `${JSON.stringify({ systemMessage: message, ...context })}\n`, stderr: `${message}\n` };
}
