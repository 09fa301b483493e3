import { leaseUntil } from "../domain/claims.js";
import type { Caller } from "./caller.js";
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
 * free for anyone at once; like any lapse it is recorded as claim_expired when swept, and the
 * claim stays keyed to this session for fencing. No version, no event, like renewal by activity.
 */
export async function heartbeat(
  deps: ServiceDeps,
  input: HeartbeatInput,
  caller: Caller & { session: string },
): Promise<Result<HeartbeatResult>> {
  return mutate(deps, caller, async ({ tx, session, databaseNow }) => {
    const until = input.ended ? databaseNow : leaseUntil(new Date(databaseNow), input.seconds);
    const claims = tx.beatClaims(session, databaseNow, until, input.seconds);
    claims.catch(() => {});
    const reservations = await tx.beatReservations(session, databaseNow, until, input.seconds);
    return ok({ claims: await claims, reservations });
  });
}
