/** The overview (board, tree, graph): one load per list, shared helpers over its tasks. */
import type { Overview, OverviewTask } from "../contract.js";
import { getJson } from "./api.js";
import { setServerNow } from "./common.js";
import { type Resource, useResource } from "./live.js";

export function useOverview(list: string, enabled = true): Resource<Overview> {
  return useResource(
    `overview:${list}`,
    async () => {
      const overview = await getJson<Overview>(
        list ? `/api/overview?list=${encodeURIComponent(list)}` : "/api/overview",
      );
      setServerNow(overview.now);
      return overview;
    },
    enabled,
  );
}

/** Task order on the board: priority, then newest change first. */
export function byPriority(a: OverviewTask, b: OverviewTask): number {
  return a.priority - b.priority || b.updated_at.localeCompare(a.updated_at);
}
