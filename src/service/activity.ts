import type { TaskStore } from "../store/task-store.js";
import type { ActivityView } from "./views.js";

/**
 * The dashboard's activity: the whole event log searched on the server, newest first, one page
 * at a time. `before` is the cursor: the `next_before` of the page before.
 */

export const ACTIVITY_PAGE = 100;
const ACTIVITY_MAX = 500;

export interface ActivityQuery {
  before?: number | undefined;
  limit?: number | undefined;
  task_id?: string | undefined;
  agent?: string | undefined;
  session_id?: string | undefined;
  /** Event types (any of them). */
  event_types?: readonly string[] | undefined;
  /** ISO 8601 timestamps: from inclusive, to exclusive. */
  from?: string | undefined;
  to?: string | undefined;
  /** Case-insensitive text in the event's type, agent, task id, payload, or its task's title. */
  text?: string | undefined;
}

export async function readActivity(store: TaskStore, query: ActivityQuery = {}): Promise<ActivityView> {
  const limit = Math.min(Math.max(1, query.limit ?? ACTIVITY_PAGE), ACTIVITY_MAX);
  return store.read(async (tx) => {
    const seq = await tx.maxEventSeq();
    const found = await tx.searchEvents({ ...query, limit });
    const titles: Record<string, string> = {};
    const events = found.map(({ task_title, ...event }) => {
      if (event.task_id !== null && task_title !== null) titles[event.task_id] = task_title;
      return event;
    });
    const last = events.at(-1);
    return { seq, events, titles, next_before: events.length === limit && last ? last.seq : null };
  });
}
