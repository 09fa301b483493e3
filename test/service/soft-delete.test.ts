import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import {
  createTask,
  createTasks,
  events,
  expectCallError,
  expectQueryError,
  getTask,
  query,
  queryIds,
  rawRows,
  relateOk,
  useProject,
} from "./helpers.js";

/** Soft delete: gone from every read, kept in the database with its history. */

/** A task with context, progress, a relationship, a session and a file; then deleted. */
async function deletedWithHistory(p: TestProject) {
  const [task, other] = await createTasks(p, "doomed", "other");
  await relateOk(p, "add", task!.id, "relates_to", other!.id);
  await p.ok("arbeit_context_add", { task_id: task!.id, type: "note", content: "n" });
  const [item] = (await p.ok("arbeit_progress_add", { task_id: task!.id, items: ["step"] })).items;
  await p.ok("arbeit_task_start_work", { task_id: task!.id });
  await p.service.trackFile({ path: "src/gone.ts", operation: "write" }, p.caller);
  await p.ok("arbeit_task_stop_work", { task_id: task!.id });
  await p.ok("arbeit_task_delete", { task_id: task!.id });
  return { id: task!.id, other: other!.id, itemId: item.id as string };
}

describe("a soft-deleted task", () => {
  const project = useProject();

  it("keeps its row, marked deleted_at, and its related rows", async () => {
    const p = project();
    const { id } = await deletedWithHistory(p);
    const [row] = rawRows(p, "SELECT deleted_at FROM tasks WHERE id = ?", id);
    assert.equal(row?.deleted_at, p.clock.current.toISOString());
    for (const table of ["context_entries", "progress_items", "session_links", "file_associations"]) {
      assert.equal(rawRows(p, `SELECT id FROM ${table} WHERE task_id = ?`, id).length, 1, table);
    }
    assert.equal(rawRows(p, "SELECT id FROM relationships WHERE from_task_id = ? OR to_task_id = ?", id, id).length, 1);
  });

  it("keeps its events, ending with task_deleted", async () => {
    const p = project();
    const { id } = await deletedWithHistory(p);
    const log = await events(p, { task_id: id });
    assert.equal(log[0]!.event_type, "task_created");
    assert.equal(log.at(-1)!.event_type, "task_deleted");
    assert.equal(rawRows(p, "SELECT seq FROM events WHERE task_id = ?", id).length, log.length);
  });

  for (const [tool, args] of [
    ["arbeit_task_get", (id: string) => ({ task_id: id })],
    ["arbeit_task_update", (id: string) => ({ task_id: id, title: "x" })],
    ["arbeit_task_delete", (id: string) => ({ task_id: id })],
    ["arbeit_task_start_work", (id: string) => ({ task_id: id })],
    ["arbeit_task_stop_work", (id: string) => ({ task_id: id })],
    ["arbeit_context_add", (id: string) => ({ task_id: id, type: "note", content: "c" })],
    ["arbeit_progress_add", (id: string) => ({ task_id: id, items: ["x"] })],
  ] as const) {
    it(`answers TASK_NOT_FOUND to ${tool}`, async () => {
      const p = project();
      const { id } = await deletedWithHistory(p);
      await expectCallError(p, tool, args(id), "TASK_NOT_FOUND");
    });
  }

  it("answers TASK_NOT_FOUND to the queries that take its id", async () => {
    const p = project();
    const { id } = await deletedWithHistory(p);
    for (const name of ["children_of", "descendants_of", "ancestors_of", "files_for_task"]) {
      await expectQueryError(p, name, { task_id: id }, "TASK_NOT_FOUND");
    }
    await expectQueryError(p, "recent_activity", { since: "1h", task_id: id }, "TASK_NOT_FOUND");
  });

  it("is left out of every listing query", async () => {
    const p = project();
    const { id } = await deletedWithHistory(p);
    p.clock.advanceDays(30);
    for (const [name, params] of [
      ["tasks", {}],
      ["tasks", { status: ["open", "in_progress", "completed", "cancelled"] }],
      ["active_tasks", {}],
      ["ready", {}],
      ["blocked_tasks", {}],
      ["blocking_tasks", {}],
      ["stale_tasks", { days: 1 }],
    ] as const) {
      assert.ok(!(await queryIds(p, name, params)).includes(id), name);
    }
    assert.deepEqual((await query(p, "tasks_for_file", { file_path: "src/gone.ts" })).tasks, []);
    const activity = await query(p, "recent_activity", { since: "60d" });
    assert.deepEqual([activity.context, activity.progress], [[], []]);
  });

  it("leaves its progress items uncompletable (ENTRY_NOT_FOUND)", async () => {
    const p = project();
    const { itemId } = await deletedWithHistory(p);
    await expectCallError(p, "arbeit_progress_complete", { item_ids: [itemId] }, "ENTRY_NOT_FOUND");
  });

  it("disappears from its parent's children", async () => {
    const p = project();
    const parent = await createTask(p, "parent");
    const child = await createTask(p, "child", { parent_id: parent.id });
    await p.ok("arbeit_task_delete", { task_id: child.id });
    assert.deepEqual(await queryIds(p, "children_of", { task_id: parent.id }), []);
    assert.deepEqual(await queryIds(p, "descendants_of", { task_id: parent.id }), []);
  });

  it("no longer blocks the tasks it blocked", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    const task = await createTask(p, "task", { blocked_by: [blocker.id] });
    await p.ok("arbeit_task_delete", { task_id: blocker.id });
    const after = await getTask(p, task.id);
    assert.equal(after.blocked, false);
    assert.deepEqual(after.blocked_by, []);
    assert.deepEqual(await queryIds(p, "ready"), [task.id]);
    assert.deepEqual(await queryIds(p, "blocked_tasks"), []);
  });
});
