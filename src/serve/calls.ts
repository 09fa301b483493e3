import { listIdProblem } from "../domain/identity.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import { callRefusal, sessionRefusal, type Token, type ToolFacts, tokenCaller } from "../team/token-rules.js";
import { findTool } from "../tools/catalogue.js";
import type { ToolDef } from "../tools/define.js";
import { type Envelope, failure, invokeTool } from "../tools/envelope.js";
import { CallGuard, guardedService, Refused } from "./call-guard.js";
import { Refusal } from "./http.js";
import type { SessionOwners } from "./session-owners.js";
import { type Bearer, invalidToken, type TokenGate } from "./token-gate.js";

/** Where the service runs tools: its one open store, and the directory paths resolve against. */
export interface ServiceContext {
  service: ArbeitService;
  cwd: string;
  db: string | undefined;
}

/** A ServiceContext with the tokens and the sessions' owners it checks callers against. */
export interface CallContext extends ServiceContext {
  sessions: SessionOwners;
  gate: TokenGate;
}

const facts = (tool: ToolDef): ToolFacts => ({ name: tool.name, readOnly: tool.annotations.readOnlyHint });
const lookup = (name: string): ToolFacts | undefined => {
  const tool = findTool(name);
  return tool && facts(tool);
};

/** The most sessions a request names as its parents: a chain of sub-agents is never this deep. */
const MAX_PARENTS = 16;

/** A request's `list`: the caller's default list (undefined when absent), checked as a tool's list_id is. */
export function defaultList(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const problem = typeof value === "string" ? listIdProblem(value) : "must be a string";
  if (problem) throw new Refusal(400, "INVALID_ARGUMENT", `list ${problem}.`);
  return value as string;
}

/** A request's `parents`: the sessions its session was started from, nearest first (none when absent). */
export function parentSessions(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_PARENTS || !value.every((parent) => typeof parent === "string"))
    throw new Refusal(400, "INVALID_ARGUMENT", `parents must be an array of at most ${MAX_PARENTS} session ids.`);
  return value;
}

/** The verdict on one session reached without a read, or undefined when its owner must be read. */
function unreadVerdict(
  context: CallContext,
  token: Token,
  session: string | undefined,
): { refusal: unknown } | undefined {
  if (session === undefined) return { refusal: undefined };
  const refusal = sessionRefusal(token, session);
  if (refusal || session.startsWith("agent:")) return { refusal };
  return context.sessions.remembered(token, session);
}

/**
 * Why the token may not act in these sessions (the one a caller chose, and those it says it was
 * started from), or undefined when it may: another agent's `agent:<name>` session, or a session
 * another agent has used (docs/team.md). Inside an open transaction its reads join it, all sent
 * together; the first session in order that is refused decides.
 */
export async function sessionsRefusal(
  context: CallContext,
  token: Token,
  sessions: ReadonlyArray<string | undefined>,
): Promise<unknown> {
  const refusals = sessions.map((session) => {
    const verdict = unreadVerdict(context, token, session);
    return verdict ? verdict.refusal : context.sessions.refusal(token, session as string);
  });
  return (await Promise.all(refusals)).find((refusal) => refusal !== undefined);
}

/**
 * Runs `run` on the service guarded for `bearer` acting in `sessions` (CallGuard): the token is
 * read again (unless this request already did) and the sessions' owners are checked inside the
 * call's first transaction, beside its first statements, or after the call when it opened none.
 * A token found inactive throws the 401 refusal; a session refusal is the answer, whatever the
 * call answered.
 *
 * When the sessions are decided without a read and allowed (the caller's own `agent:` session, or
 * ones whose owner is remembered), only the token is left to check: a statement that aborts the
 * transaction unless it is active asserts it, so a write's COMMIT leaves with its final wave, as
 * in process, and not a round trip later behind the check's answer.
 */
export async function guardedCall(
  context: CallContext,
  bearer: Bearer,
  sessions: ReadonlyArray<string | undefined>,
  run: (service: ArbeitService) => Promise<Envelope>,
): Promise<Envelope> {
  const inactive = () => new Refused(invalidToken(true));
  const guard = new CallGuard((now) => {
    const unread = sessions.map((session) => unreadVerdict(context, bearer.token, session));
    if (!bearer.verified && unread.every((verdict) => verdict !== undefined && verdict.refusal === undefined))
      return {
        asserted: true,
        verdict: context.gate.asserted(bearer, now).then((active) => {
          if (!active) throw inactive();
        }),
      };
    // The token and the sessions' owners are read together: one round trip.
    const verdict = Promise.all([
      bearer.verified || context.gate.active(bearer, now),
      sessionsRefusal(context, bearer.token, sessions),
    ]).then(([active, taken]) => {
      if (!active) throw inactive();
      if (taken) throw new Refused(taken);
    });
    return { asserted: false, verdict };
  });
  let envelope = await run(guardedService(context.service, guard));
  if (!guard.checked) {
    const store = context.service.store;
    const checked = await store.read((tx) => guard.pass(tx.databaseNow())).catch((error: unknown) => error);
    if (!guard.checked) envelope = failure(checked);
  }
  if (guard.refusal instanceof Refusal) throw guard.refusal;
  if (guard.refusal !== undefined) return failure(guard.refusal);
  if (!bearer.verified) context.gate.used(bearer.token.id);
  return envelope;
}

/**
 * One call of `tool` made with `bearer`'s token, in the session the caller chose (or its agent's
 * own), started from `parents` (a sub-agent's conversation), in the caller's default `list`:
 * the token's rules first
 * (docs/team.md), then the tool exactly as every front end runs it.
 */
export async function callWithToken(
  context: CallContext,
  bearer: Bearer,
  tool: ToolDef,
  args: unknown,
  session: string | undefined,
  parents: readonly string[] = [],
  list?: string | undefined,
): Promise<Envelope> {
  const { token } = bearer;
  const refusal =
    (session === undefined ? undefined : sessionRefusal(token, session)) ??
    callRefusal(token, facts(tool), args, lookup);
  if (refusal) {
    // Refused by the token's rules alone; whether the token is still active comes first.
    if (!bearer.verified && !(await context.gate.active(bearer, undefined))) throw invalidToken(true);
    return failure(refusal);
  }
  // A session argument of the tool's own replaces the chosen one for this call (as invokeTool does).
  const own = (args as { session?: unknown } | null)?.session;
  const acting = typeof own === "string" ? own : session;
  return guardedCall(context, bearer, [acting, ...parents], (service) =>
    invokeTool(tool, args, {
      caller: {
        ...tokenCaller(token, session),
        ...(parents.length > 0 ? { parents } : {}),
        ...(list !== undefined ? { list_id: list } : {}),
      },
      cwd: context.cwd,
      db: context.db,
      service: async () => service,
    }),
  );
}
