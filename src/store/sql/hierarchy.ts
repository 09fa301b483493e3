import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { TaskKey } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";
import { AFTER_TASK_KEY, TASK_ORDER, taskColumns } from "./task-columns.js";

/** A walk never goes deeper than this, so a damaged store with a cycle cannot loop forever. */
const MAX_TREE_DEPTH = 16;

/** How many tasks the backward half of a reachability check visits before handing over. */
const BACKWARD_STEPS = 64;

/** The live tasks one edge away: the far end of `type` edges leaving (`out`) or entering (`in`) a task. */
function linkedTasks(columns: string, type: "parent_of" | "blocks", direction: "out" | "in", extra = ""): string {
  const [near, far] = direction === "out" ? ["from_task_id", "to_task_id"] : ["to_task_id", "from_task_id"];
  return `SELECT ${columns} FROM relationships e JOIN tasks t ON t.id = e.${far}
    WHERE e.${near} = ? AND e.type = '${type}' AND e.removed_at IS NULL AND t.deleted_at IS NULL${extra}
    ORDER BY ${TASK_ORDER}`;
}

/**
 * The ids of the live children and dependants of a task (one parameter). Ids only: a task can have
 * 200,000 dependants, and reading each as a whole task (its parent, blockers and blocked flag)
 * costs seconds where the ids alone cost a fraction of one.
 */
export const CHILD_AND_DEPENDANT_IDS = `SELECT e.to_task_id AS id FROM relationships e JOIN tasks t ON t.id = e.to_task_id
      WHERE e.from_task_id = ? AND e.type IN ('parent_of', 'blocks') AND e.removed_at IS NULL
        AND t.deleted_at IS NULL`;

const texts = perDialect((d) => {
  const columns = taskColumns(d);
  const join = d.outerJoin;
  const descendants = (after: string) => `WITH RECURSIVE down(id, depth) AS (
         SELECT to_task_id, 1 FROM relationships
           WHERE from_task_id = ? AND type = 'parent_of' AND removed_at IS NULL
         UNION ALL
         SELECT r.to_task_id, down.depth + 1 FROM down ${join} relationships r ON r.from_task_id = down.id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND down.depth < ${MAX_TREE_DEPTH}
       )
       SELECT ${columns}, down.depth AS depth FROM down ${join} tasks t ON t.id = down.id
       WHERE t.deleted_at IS NULL ${after} ORDER BY down.depth, ${TASK_ORDER} LIMIT ?`;
  return {
    children: linkedTasks(columns, "parent_of", "out"),
    childrenPage: `${linkedTasks(columns, "parent_of", "out")} LIMIT ?`,
    childrenAfter: `${linkedTasks(columns, "parent_of", "out", ` AND ${AFTER_TASK_KEY}`)} LIMIT ?`,
    blockers: linkedTasks(columns, "blocks", "in"),
    blocking: linkedTasks(columns, "blocks", "out"),
    below: CHILD_AND_DEPENDANT_IDS,
    ancestors: `WITH RECURSIVE up(id, distance) AS (
         SELECT from_task_id, 1 FROM relationships
           WHERE to_task_id = ? AND type = 'parent_of' AND removed_at IS NULL
         UNION ALL
         SELECT r.from_task_id, up.distance + 1 FROM up ${join} relationships r ON r.to_task_id = up.id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND up.distance < ${MAX_TREE_DEPTH}
       )
       SELECT ${columns} FROM up ${join} tasks t ON t.id = up.id WHERE t.deleted_at IS NULL
       ORDER BY up.distance`,
    descendants: descendants(""),
    descendantsAfter: descendants("AND (down.depth, t.priority, t.created_at, t.id) > (?, ?, ?, ?)"),
    level: `WITH RECURSIVE up(id, distance) AS (
         SELECT ${d.idParam}, 0
         UNION ALL
         SELECT r.from_task_id, up.distance + 1 FROM up ${join} relationships r ON r.to_task_id = up.id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND up.distance < ${MAX_TREE_DEPTH}
       )
       SELECT MAX(distance) AS distance FROM up`,
    subtreeHeight: `WITH RECURSIVE down(id, depth) AS (
         SELECT ${d.idParam}, 0
         UNION ALL
         SELECT r.to_task_id, down.depth + 1 FROM down ${join} relationships r ON r.from_task_id = down.id
           ${join} tasks c ON c.id = r.to_task_id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND c.deleted_at IS NULL
             AND down.depth < ${MAX_TREE_DEPTH}
       )
       SELECT MAX(depth) AS depth FROM down`,
    // UNION (not UNION ALL) keeps each task once, so an existing cycle cannot loop forever.
    // Deleted tasks are out of the graph: a path through one is no path. On SQLite the deleted
    // check looks in idx_tasks_deleted, which holds deleted tasks only: a lookup in a tiny tree
    // instead of a row read per step.
    reaches: `WITH RECURSIVE reach(id) AS (
         SELECT ${d.idParam}
         UNION
         SELECT r.to_task_id FROM reach ${join} relationships r ON r.from_task_id = reach.id
           WHERE r.type = ? AND r.removed_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM tasks n ${d.indexedBy("idx_tasks_deleted")}
                             WHERE n.id = r.to_task_id AND n.deleted_at IS NOT NULL)
       )
       SELECT 1 AS found FROM reach WHERE id = ? LIMIT 1`,
    // The same walk backwards from the target, stopped after a few steps: most new edges join a
    // task with few or no predecessors, and then this small walk answers alone.
    reachedFrom: `WITH RECURSIVE back(id) AS (
         SELECT ${d.idParam}
         UNION
         SELECT r.from_task_id FROM back ${join} relationships r ON r.to_task_id = back.id
           WHERE r.type = ? AND r.removed_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM tasks n ${d.indexedBy("idx_tasks_deleted")}
                             WHERE n.id = r.from_task_id AND n.deleted_at IS NOT NULL)
       )
       SELECT id FROM back LIMIT ${BACKWARD_STEPS + 1}`,
  };
});

/** Walks of the hierarchy (parent_of) and of dependencies (blocks). */
export function hierarchyStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  const tasks = async (text: string, id: string) => (await db.all(text, id)).map(toTask);
  return {
    children: (id: string): Promise<Task[]> => tasks(sql.children, id),

    async childrenPage(id: string, limit: number, after?: TaskKey): Promise<Task[]> {
      const rows = after
        ? await db.all(sql.childrenAfter, id, ...after, limit)
        : await db.all(sql.childrenPage, id, limit);
      return rows.map(toTask);
    },
    blockers: (id: string): Promise<Task[]> => tasks(sql.blockers, id),
    blocking: (id: string): Promise<Task[]> => tasks(sql.blocking, id),
    ancestors: (id: string): Promise<Task[]> => tasks(sql.ancestors, id),

    async childAndDependantIds(id: string): Promise<string[]> {
      return (await db.all(sql.below, id)).map((row) => row.id as string);
    },

    async descendants(
      id: string,
      limit: number,
      after?: readonly [number, ...TaskKey],
    ): Promise<Array<Task & { depth: number }>> {
      const rows = after
        ? await db.all(sql.descendantsAfter, id, ...after, limit)
        : await db.all(sql.descendants, id, limit);
      return rows.map((row) => ({ ...toTask(row), depth: Number(row.depth) }));
    },

    /** Level of a task in its hierarchy: a root is 1. */
    async level(id: string): Promise<number> {
      return Number((await db.get(sql.level, id))?.distance ?? 0) + 1;
    },

    /** Height of the subtree rooted at `id`, counting the task itself as 1. */
    async subtreeHeight(id: string): Promise<number> {
      return Number((await db.get(sql.subtreeHeight, id))?.depth ?? 0) + 1;
    },

    /** True when `target` can be reached from `from` along live edges of `type`. */
    async reaches(from: string, target: string, type: "blocks" | "parent_of"): Promise<boolean> {
      // Everything that reaches `target`, when that is a handful of tasks, settles it; otherwise
      // walk forward from `from`, however far that goes.
      const behind = await db.all(sql.reachedFrom, target, type);
      if (behind.length <= BACKWARD_STEPS) return behind.some((row) => row.id === from);
      return (await db.get(sql.reaches, from, type, target)) !== undefined;
    },
  };
}
