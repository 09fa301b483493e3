import type { ArbeitService } from "../service/arbeit-service.js";

const PAGE = 500;

/**
 * The task a session last started or stopped work on, from the event log (work events carry the
 * session). Scans only work events, a page at a time, so it stays cheap on a long history.
 */
export async function lastWorkedTaskId(service: ArbeitService, session: string): Promise<string | undefined> {
  return service.store.read(async (tx) => {
    let found: string | undefined;
    for (let after = 0; ; ) {
      const events = await tx.listEvents({
        after_seq: after,
        event_types: ["work_started", "work_stopped"],
        limit: PAGE,
      });
      for (const event of events) if (event.session_id === session && event.task_id) found = event.task_id;
      if (events.length < PAGE) return found;
      after = events.at(-1)!.seq;
    }
  });
}
