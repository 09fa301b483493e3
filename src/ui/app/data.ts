/** The overview (board, tree, graph): one load per list, shared helpers over its tasks. */
import type { Overview, OverviewTask } from "../contract.js";
import { getJson } from "./api.js";
import { setServerNow } from "./common.js";
import { type Resource, useResource } from "./live.js";

/** The newest overview of each list the page has read: a live change asks only for what changed since. */
const held = new Map<string, Overview>();

/** Server order (priority, age, id), so a merged overview reads like a whole one. */
function serverOrder(a: OverviewTask, b: OverviewTask): number {
  return a.priority - b.priority || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);
}

/** The overview `base` brought up to date by `part`, an answer to `since=base.seq`. */
function merged(base: Overview, part: Overview): Overview {
  const changed = new Map(part.tasks.map((task) => [task.id, task]));
  const removed = new Set(part.removed ?? []);
  const tasks = base.tasks.filter((task) => !changed.has(task.id) && !removed.has(task.id));
  tasks.push(...changed.values());
  tasks.sort(serverOrder);
  const { partial: _partial, removed: _removed, ...rest } = part;
  return { ...rest, tasks };
}

export function useOverview(list: string, enabled = true): Resource<Overview> {
  return useResource(
    `overview:${list}`,
    async () => {
      const base = held.get(list);
      const query = new URLSearchParams();
      if (list) query.set("list", list);
      if (base) query.set("since", String(base.seq));
      const search = query.toString();
      const answer = await getJson<Overview>(`/api/overview${search ? `?${search}` : ""}`);
      const overview = answer.partial && base ? merged(base, answer) : answer;
      held.set(list, overview);
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
