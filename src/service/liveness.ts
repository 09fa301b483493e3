import { leaseUntil } from "../domain/claims.js";
import type { Caller } from "./caller.js";
import { sweepExpiredClaims } from "./claims.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";

export interface HeartbeatInput {
  /** How long from now the session's claims and reservations stay held without another beat. */
  seconds: number;
  /** The conversation ended in order: its claims and reservations lapse now instead. */
  ended: boolean;
}

export interface HeartbeatResult {
  claims: number;
  reservations: number;
}

/**
 * A beat of a live conversation's session: every claim and file reservation it holds runs until
 * `seconds` from now on the database's clock (sooner or later than its lease said), with that
 * length as its own from then on, so renewal by activity keeps to it. `ended`: they lapse now,
 * free for anyone at once, and swept there and then: recorded as claim_expired, so that the claim
 * stays keyed to this session for fencing (a session that lived on after all is told CLAIM_MOVED
 * once another took the task, as after any lapse). No version, no event, like renewal by activity.
 */
export async function heartbeat(
  deps: ServiceDeps,
  input: HeartbeatInput,
  caller: Caller & { session: string },
): Promise<Result<HeartbeatResult>> {
  return mutate(deps, caller, async (w) => {
    const { tx, session, databaseNow } = w;
    const until = input.ended ? databaseNow : leaseUntil(new Date(databaseNow), input.seconds);
    const claims = tx.beatClaims(session, databaseNow, until, input.seconds);
    claims.catch(() => {});
    const reservations = await tx.beatReservations(session, databaseNow, until, input.seconds);
    const counts = { claims: await claims, reservations };
    // Swept at once, so that the tasks read as free (no holder named) right away.
    if (input.ended) await sweepExpiredClaims(w);
    return ok(counts);
  });
}
