import type { TaskStore } from "../store/task-store.js";
import type { Notice, NoticesView } from "./notice-types.js";
import { webhookKind } from "./webhooks.js";

export type { Notice, NoticesView };

/**
 * What an open dashboard tells a person of, besides questions: a task completing (the page keeps
 * the ones the person follows) and a claim going stale. A claim is stale once its lease has run
 * out (on the database's clock), the home view's definition: it stays listed as stale until a
 * later claim or resume sweeps it, which records `claim_expired`. Both are the same happening,
 * so both carry the same key (the task and the lease's end), and a page notifies of it once.
 */

/** Events read per answer: a page that is further behind asks again from where this one ended. */
export const NOTICES_BATCH = 200;

const staleKey = (taskId: string, until: unknown) => `stale_claim:${taskId}:${String(until)}`;

export function readNotices(store: TaskStore, after?: number): Promise<NoticesView> {
  return store.read(async (tx) => {
    const now = tx.databaseNow();
    const newest = await tx.maxEventSeq();
    const stale = await tx.claimsAt(now, false);
    const [nextLease] = await tx.claimsAt(now, true);
    const notices: Notice[] = stale.map((claim) => ({
      kind: "stale_claim",
      key: staleKey(claim.task_id, claim.until),
      task_id: claim.task_id,
      title: claim.title,
      agent: claim.owner,
      session: claim.session,
      at: claim.until,
    }));
    let seq = newest;
    let more = false;
    if (after !== undefined && after < newest) {
      const events = (
        await tx.listEvents({
          after_seq: after,
          event_types: ["task_updated", "claim_expired"],
          limit: NOTICES_BATCH,
        })
      ).filter((event) => event.seq <= newest);
      more = events.length === NOTICES_BATCH;
      if (more) seq = events.at(-1)!.seq;
      const happened = events.flatMap((event) => {
        const kind = webhookKind(event);
        return (kind === "task_completed" || kind === "stale_claim") && event.task_id ? [{ event, kind }] : [];
      });
      const titles = new Map(
        (await tx.getTasks([...new Set(happened.map(({ event }) => event.task_id!))])).map((task) => [
          task.id,
          task.title,
        ]),
      );
      for (const { event, kind } of happened) {
        const taskId = event.task_id!;
        const title = titles.get(taskId) ?? null;
        if (kind === "task_completed")
          notices.push({
            kind,
            key: `task_completed:${event.seq}`,
            task_id: taskId,
            title,
            agent: event.agent,
            session: event.session_id,
            at: event.timestamp,
          });
        else
          notices.push({
            kind,
            key: staleKey(taskId, event.payload.lease_expires_at),
            task_id: taskId,
            title,
            agent: typeof event.payload.owner === "string" ? event.payload.owner : null,
            session: typeof event.payload.session === "string" ? event.payload.session : null,
            at: String(event.payload.lease_expires_at),
          });
      }
    }
    return { seq, now, notices, next_lease_end: nextLease?.until ?? null, more };
  });
}
