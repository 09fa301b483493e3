import { withArticle } from "../domain/article.js";
import { ArbeitError } from "../domain/errors.js";
import { agentSession, listIdProblem, nameProblem } from "../domain/identity.js";

/**
 * Who is calling. The session is the caller's conversation (OpenCode's sessionID, Claude Code's
 * session id, the MCP connection, or --session): it holds claims, active work, focus, the event
 * cursor and idempotency records. The agent is a name for people and filters; two sessions that
 * share an agent name share nothing else. A caller without a session acts as `agent:<name>`.
 * The list scopes reads and is the default for creates.
 */
export interface Caller {
  session: string | null;
  agent: string | null;
  list_id?: string;
  /**
   * The sessions this one was started from, nearest first (an OpenCode sub-agent's parent): a
   * file touched by a session without work of its own is recorded against the nearest one's task.
   */
  parents?: readonly string[];
  /** The token the call came with (`arbeit serve`): every event it writes names it. */
  token?: string;
}

/** A caller whose names are checked and whose session is settled. */
export interface Identity extends Caller {
  session: string;
}

export const ANONYMOUS: Caller = { session: null, agent: null };

function check(field: string, value: string | null | undefined, problemOf = nameProblem): void {
  if (value === null || value === undefined) return;
  const problem = typeof value === "string" ? problemOf(value) : "must be a string";
  if (problem) {
    throw new ArbeitError("INVALID_ARGUMENT", `The caller's ${field} ${problem}.`, {
      details: { field },
      suggestions: [`Give ${withArticle(field)} of 1-128 printable characters.`],
    });
  }
}

/** Checks the caller's names and settles its session; INVALID_ARGUMENT names the field at fault. */
export function identify(caller: Caller): Identity {
  check("agent", caller.agent);
  check("session", caller.session);
  // The tools' own list_id rule: a list the caller could not name in a call would hold tasks
  // nobody can ever filter by again.
  check("list", caller.list_id, listIdProblem);
  for (const parent of caller.parents ?? []) check("parent session", parent);
  return { ...caller, session: caller.session ?? agentSession(caller.agent) };
}
