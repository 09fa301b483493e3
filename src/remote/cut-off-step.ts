import { list, oneOf, optionalCount, row, text, textItem } from "./step-input.js";
import type { HostStep } from "./steps.js";

/**
 * A checkout tells the service, once it answers again, that it was cut off: from when to when,
 * why, how many of the records it kept meanwhile it delivered (and how many the service refused),
 * and which edits its hooks let through (or refused) without the check. Recorded as a
 * `client_cut_off` event of the token's agent, which `arbeit status` and the dashboard list. Sent
 * once per outage under the outage's id.
 */

const SHORT = 200;
const WHY_CHARS = 500;
/** What a checkout remembers of one outage at most (src/remote/service-away.ts). */
const MAX_EDITS = 100;
const MAX_PATHS = 20;
const PATH_CHARS = 1_000;

export interface CutOff {
  since: string;
  until: string;
  cause: string;
  why: string;
  delivered: number;
  set_aside: number;
  unchecked_edits: Array<{ at: string; session: string | null; paths: string[]; decision: "allowed" | "denied" }>;
}

export const cutOffStep: HostStep<CutOff, object> = {
  name: "client-cut-off",
  read(input) {
    const value = row(input);
    return {
      since: text(value, "since", SHORT),
      until: text(value, "until", SHORT),
      cause: text(value, "cause", SHORT),
      why: text(value, "why", WHY_CHARS),
      delivered: optionalCount(value, "delivered") ?? 0,
      set_aside: optionalCount(value, "set_aside") ?? 0,
      unchecked_edits: list(value, "unchecked_edits", MAX_EDITS, (entry, field) => {
        const edit = row(entry, field);
        return {
          at: text(edit, "at", SHORT),
          session: edit.session === null ? null : text(edit, "session", SHORT),
          paths: list(edit, "paths", MAX_PATHS, textItem(PATH_CHARS)),
          decision: oneOf(edit, "decision", ["allowed", "denied"] as const),
        };
      }),
    };
  },
  readOnly: { answer: {} },
  async run(service, input, caller) {
    await service.recordSessionEvent({ event_type: "client_cut_off", payload: { ...input } }, caller);
    return {};
  },
};
