import type { EventSearch } from "../store/sql/mission.js";
import type { TaskStore } from "../store/task-store.js";
import type { ActivityView } from "./views.js";

/**
 * The dashboard's activity: the whole event log searched on the server, newest first, one page
 * at a time. `before` is the cursor: the `next_before` of the page before.
 */

export const ACTIVITY_PAGE = 100;
const ACTIVITY_MAX = 500;

/** The activity search: the store's event search, with the page size optional. */
export type ActivityQuery = Omit<EventSearch, "limit"> & { limit?: number | undefined };

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
