import { outboxContents } from "./outbox.js";
import { readAwayState } from "./service-away.js";

/**
 * What `arbeit status` says of the checkout's own record of an outage (src/remote/service-away.ts)
 * and its outbox (src/remote/outbox.ts): since when the hooks found the service away, how many
 * records wait for it, and how many it refused for good.
 */
export interface OutageStatus {
  away?: { since: string; last_tried: string; cause: string; why: string; unchecked_edits: number };
  pending: number;
  set_aside: number;
}

export function outageStatus(folder: string): OutageStatus {
  const { away } = readAwayState(folder);
  const { pending, refused } = outboxContents(folder);
  return {
    ...(away
      ? {
          away: {
            since: away.since,
            last_tried: away.last_tried,
            cause: away.cause,
            why: away.why,
            unchecked_edits: away.unchecked_edits.length,
          },
        }
      : {}),
    pending: pending.length,
    set_aside: refused.length,
  };
}

/** The lines `arbeit status` lists under "Needs attention". */
export function outageAttention(status: OutageStatus): Array<{ message: string; hint?: string }> {
  const items: Array<{ message: string; hint?: string }> = [];
  if (status.away)
    items.push({
      message: `Coordination is off in this checkout since ${status.away.since}: the hooks could not ask the service (${status.away.why}); ${status.away.unchecked_edits} edit(s) went unchecked.`,
      hint: "The next hook that reaches the service delivers what waits and reports the outage.",
    });
  if (status.pending > 0)
    items.push({
      message: `${status.pending} record(s) of the hooks wait in .arbeit/outbox.jsonl for the service.`,
      hint: "They are delivered, in order, by the next hook that reaches the service.",
    });
  if (status.set_aside > 0)
    items.push({
      message: `${status.set_aside} record(s) the service refused are kept in .arbeit/outbox-refused.jsonl.`,
      hint: "Each line names the step and the refusal; the service may run an older Arbeit release.",
    });
  return items;
}
