import type { Envelope } from "../domain/envelope.js";
import { ArbeitError } from "../domain/errors.js";
import { EDIT_CHECK_TIMEOUT_MS, HOOK_TIMEOUT_MS, type HookRequest, postHook, type Reply } from "./client.js";
import { type Delivery, drain, enqueue, hasPending, type OutboxEntry, setAside } from "./outbox.js";
import { type Away, addDelivered, freshAway, markAway, markBack, markRefused, readAwayState } from "./service-away.js";
import type { HostStep, StepSession } from "./steps.js";
import type { ServiceTarget } from "./target.js";

/**
 * How a host's hook steps reach the service when it may be away (src/remote/service-away.ts,
 * src/remote/outbox.ts). Every step is one POST /api/hook; a step that only writes carries a fresh
 * id, so that the same step sent again later is applied once. When the service cannot be asked
 * (nothing answers, no answer in time, a 5xx, a refused token) the checkout remembers it for
 * RETRY_AFTER_MS, a step that only writes is kept in the outbox, and the step fails with
 * ServiceAwayError for the host to answer without the service (allow or deny an edit, tell the
 * agent). The next step that finds the service answering first delivers what waits, in order,
 * then reports the outage to the service (the client-cut-off step), then runs.
 */

/** How long a hook spends delivering what waited before its own step: the host waits for it. */
const DRAIN_BUDGET_MS = 3_000;

/** The step that tells the service a checkout was cut off, sent once per outage under its id. */
export const CUT_OFF_STEP = "client-cut-off";

/** The service cannot be asked now; `queued`: the step's record waits in the outbox. */
export class ServiceAwayError extends ArbeitError {
  readonly away: Away | undefined;
  constructor(message: string, cause: string, away: Away | undefined, queued: boolean) {
    super("STORE_UNAVAILABLE", message, {
      suggestions: [
        "Check that `arbeit serve` runs there and the network reaches it; `arbeit status` shows the outage.",
      ],
      details: { cause, queued, ...(away ? { since: away.since } : {}) },
    });
    this.away = away;
  }
}

export const isServiceAway = (error: unknown): error is ServiceAwayError => error instanceof ServiceAwayError;

/**
 * A step that only writes (a read-only token's answer to it is fixed): what it records can wait
 * in the outbox. Questions (the edit check) and briefings are asked now or not at all.
 */
export const onlyWrites = (step: HostStep<unknown, unknown>) => typeof step.readOnly === "object";

/** The edit check: the person watches the agent wait for it, so it waits less. */
const timeoutOf = (name: string) =>
  name === "pre-tool-use" || name === "check-edit" ? EDIT_CHECK_TIMEOUT_MS : HOOK_TIMEOUT_MS;

type Outcome =
  | { kind: "answer"; envelope: Envelope }
  | { kind: "away"; cause: string; why: string }
  | { kind: "refused"; error: { code: string; message: string } };

/** What a reply means: an answer (a success, or the step's own failure), the service away, or the request refused. */
function outcomeOf(reply: Reply): Outcome {
  const { envelope, status } = reply;
  if (envelope.success) return { kind: "answer", envelope };
  const { code, message } = envelope.error;
  const cause = (envelope.error.details as { cause?: unknown } | undefined)?.cause;
  if (status === undefined) {
    if (code === "STORE_UNAVAILABLE")
      return { kind: "away", cause: String(cause ?? "service_unreachable"), why: message };
    if (code === "UNAUTHORIZED") return { kind: "away", cause: "no_token", why: message };
    return { kind: "answer", envelope };
  }
  if (status === 401) return { kind: "away", cause: "token_refused", why: message };
  if (status === 429 || status >= 500 || code === "STORE_UNAVAILABLE")
    return {
      kind: "away",
      cause: status === 429 ? "service_busy" : "service_failing",
      why: `HTTP ${status}: ${message}`,
    };
  // A release the service does not serve is the host's to show as such (src/claude/hook-refusal.ts).
  if (code === "VERSION_UNSUPPORTED") return { kind: "answer", envelope };
  if (status >= 400) return { kind: "refused", error: { code, message: `HTTP ${status}: ${message}` } };
  return { kind: "answer", envelope };
}

const send = (target: ServiceTarget, env: NodeJS.ProcessEnv, request: HookRequest) =>
  postHook(target, request, env, timeoutOf(request.hook)).then(outcomeOf);

const requestOf = (entry: OutboxEntry): HookRequest => ({
  hook: entry.hook,
  session: entry.session,
  parents: entry.parents,
  list: entry.list,
  input: entry.input,
  id: entry.id,
});

/**
 * Delivers what waits in the checkout's outbox, then, when an outage was remembered, reports it to
 * the service and closes it. "away": the service did not answer (remembered again).
 */
export async function deliverOutbox(
  target: ServiceTarget & { folder: string },
  env: NodeJS.ProcessEnv,
  budgetMs = DRAIN_BUDGET_MS,
): Promise<"done" | "away" | "busy"> {
  const { folder } = target;
  let lost: { cause: string; why: string } | undefined;
  const result = await drain(
    folder,
    async (entry): Promise<Delivery> => {
      const outcome = await send(target, env, requestOf(entry));
      if (outcome.kind === "away") {
        lost = outcome;
        return { outcome: "away" };
      }
      if (outcome.kind === "refused") return { outcome: "refused", error: outcome.error };
      if (!outcome.envelope.success) return { outcome: "refused", error: outcome.envelope.error };
      return { outcome: "sent" };
    },
    Date.now() + budgetMs,
  );
  addDelivered(folder, result.delivered, result.refused);
  if (result.state === "away") {
    markAway(folder, target.url, lost?.cause ?? "service_unreachable", lost?.why ?? "no answer");
    return "away";
  }
  if (result.state === "busy") return "busy";
  const away = readAwayState(folder).away;
  if (!away) return "done";
  const report = await send(target, env, {
    hook: CUT_OFF_STEP,
    input: {
      since: away.since,
      until: new Date().toISOString(),
      cause: away.cause,
      why: away.why.slice(0, 500),
      delivered: away.delivered ?? 0,
      set_aside: away.set_aside ?? 0,
      unchecked_edits: away.unchecked_edits,
    },
    id: away.id,
  });
  if (report.kind === "away") {
    markAway(folder, target.url, report.cause, report.why);
    return "away";
  }
  // A service too old to take the report still answered: the outage is over all the same.
  markBack(folder, away.delivered ?? 0, away.set_aside ?? 0);
  return "done";
}

/**
 * Runs `step` on the service for `who`, minding an outage: see the module's comment. Without a
 * `.arbeit/` folder (ARBEIT_URL alone) nothing can be remembered or kept: each step tries the
 * service and fails as it answers.
 */
export async function runRemoteStep<I, O>(
  target: ServiceTarget,
  env: NodeJS.ProcessEnv,
  list: string | undefined,
  step: HostStep<I, O>,
  input: I,
  who: StepSession,
): Promise<O> {
  const writes = onlyWrites(step as HostStep<unknown, unknown>);
  const request: HookRequest = {
    hook: step.name,
    session: who.session ?? undefined,
    parents: who.parents?.length ? who.parents : undefined,
    list,
    input,
    ...(writes ? { id: globalThis.crypto.randomUUID() } : {}),
  };
  const folder = target.folder;
  const keep = () => {
    if (writes && folder)
      enqueue(folder, { ...(request as HookRequest & { id: string }), at: new Date().toISOString() });
    return writes && folder !== undefined;
  };
  const away = (cause: string, why: string, known?: Away) => new ServiceAwayError(why, cause, known, keep());

  if (folder) {
    const state = readAwayState(folder);
    const remembered = freshAway(state);
    if (remembered) throw away(remembered.cause, remembered.why, remembered);
    if (state.away || hasPending(folder)) {
      const delivered = await deliverOutbox({ ...target, folder }, env);
      if (delivered === "away") {
        const now = readAwayState(folder).away;
        throw away(now?.cause ?? "service_unreachable", now?.why ?? "no answer", now);
      }
      // Another process delivers, or time ran out: this step waits behind what is queued.
      if (delivered === "busy" && writes) {
        keep();
        return (step.readOnly as { answer: O }).answer;
      }
    }
  }

  const outcome = await send(target, env, request);
  if (outcome.kind === "away") {
    const known = folder ? markAway(folder, target.url, outcome.cause, outcome.why) : undefined;
    throw away(outcome.cause, outcome.why, known);
  }
  if (outcome.kind === "refused") {
    if (folder) {
      markRefused(folder, step.name, outcome.error.message);
      if (writes)
        setAside(folder, { ...(request as HookRequest & { id: string }), at: new Date().toISOString() }, outcome.error);
    }
    throw new ServiceAwayError(
      `The Arbeit service at ${target.url} refused the ${step.name} step (${outcome.error.message}).`,
      "step_refused",
      undefined,
      false,
    );
  }
  const { envelope } = outcome;
  if (!envelope.success)
    throw new ArbeitError(envelope.error.code, envelope.error.message, {
      suggestions: envelope.error.suggestions ?? [],
      ...(envelope.error.details ? { details: envelope.error.details } : {}),
    });
  return envelope.data as O;
}
