/**
 * The live tasks one edge away from a task: its children (parent_of, outwards), its blockers
 * (blocks, inwards) and the tasks it blocks (blocks, outwards). The same SQL in both stores; each
 * passes its own task projection and order. The task id is the one parameter.
 */
export function linkedTasksSql(
  projection: { columns: string; order: string },
  type: "parent_of" | "blocks",
  direction: "out" | "in",
): string {
  const [near, far] = direction === "out" ? ["from_task_id", "to_task_id"] : ["to_task_id", "from_task_id"];
  return `SELECT ${projection.columns} FROM relationships e JOIN tasks t ON t.id = e.${far}
    WHERE e.${near} = ? AND e.type = '${type}' AND e.removed_at IS NULL AND t.deleted_at IS NULL
    ORDER BY ${projection.order}`;
}
