import type { SqlValue } from "./database.js";

/** The optional task and list filters of the "recent" reads, over tasks aliased `t`. */
export function recentFilter(filter: { task_id?: string; list_id?: string }): { clause: string; params: SqlValue[] } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (filter.task_id !== undefined) {
    parts.push("AND t.id = ?");
    params.push(filter.task_id);
  }
  if (filter.list_id !== undefined) {
    parts.push("AND t.list_id = ?");
    params.push(filter.list_id);
  }
  return { clause: parts.join(" "), params };
}

export interface RecentFilter {
  since: string;
  task_id?: string;
  list_id?: string;
  limit: number;
}
