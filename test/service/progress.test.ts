import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import { createTask, createTasks, events, expectCallError, useProject } from "./helpers.js";

/** arbeit_progress_add / arbeit_progress_complete. */

async function addItems(p: TestProject, taskId: string, items: string[], completed?: boolean): Promise<any[]> {
  const args = completed === undefined ? { task_id: taskId, items } : { task_id: taskId, items, completed };
  return (await p.ok("arbeit_progress_add", args)).items;
}

describe("arbeit_progress_add", () => {
  const project = useProject();

  it("adds open items in the order given", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const items = await addItems(p, task.id, ["hook", "component", "tests"]);
    assert.deepEqual(
      items.map((item) => [item.content, item.completed, item.completed_at]),
      [
        ["hook", false, null],
        ["component", false, null],
        ["tests", false, null],
      ],
    );
    for (const item of items) {
      assert.match(item.id, /^prg-[a-z0-9]{8}$/);
      assert.equal(item.task_id, task.id);
    }
  });

  it("adds items already completed when completed is true", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const [item] = await addItems(p, task.id, ["done already"], true);
    assert.equal(item.completed, true);
    assert.equal(item.completed_at, p.clock.current.toISOString());
  });

  it("refuses an unknown task (TASK_NOT_FOUND)", async () => {
    await expectCallError(
      project(),
      "arbeit_progress_add",
      { task_id: "tkt-zzzzzzzz", items: ["x"] },
      "TASK_NOT_FOUND",
    );
  });

  it("refuses an empty list or a blank item (INVALID_ARGUMENT)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_progress_add", { task_id: task.id, items: [] }, "INVALID_ARGUMENT");
    await expectCallError(p, "arbeit_progress_add", { task_id: task.id, items: ["ok", "  "] }, "INVALID_ARGUMENT");
  });
});

describe("arbeit_progress_complete", () => {
  const project = useProject();

  it("marks the named items done, stamping completed_at, and leaves the others", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const [a, b, c] = await addItems(p, task.id, ["a", "b", "c"]);
    p.clock.advance(1000);
    const { completed } = await p.ok("arbeit_progress_complete", { item_ids: [a.id, c.id] });
    assert.deepEqual(
      completed.map((item: any) => [item.id, item.completed, item.completed_at]),
      [
        [a.id, true, p.clock.current.toISOString()],
        [c.id, true, p.clock.current.toISOString()],
      ],
    );
    const summary = (await p.ok("arbeit_task_get", { task_id: task.id, include: ["progress_summary"] }))
      .progress_summary;
    assert.deepEqual(summary, {
      total: 3,
      completed: 2,
      remaining: 1,
      percent: 67,
      remaining_items: [{ id: b.id, content: "b" }],
    });
  });

  it("is idempotent: completing again keeps the first completed_at and writes no event", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const [item] = await addItems(p, task.id, ["a"]);
    const first = (await p.ok("arbeit_progress_complete", { item_ids: [item.id] })).completed[0];
    const eventCount = (await events(p)).length;
    p.clock.advance(5000);
    const again = (await p.ok("arbeit_progress_complete", { item_ids: [item.id, item.id] })).completed;
    assert.deepEqual(again, [first]);
    assert.equal((await events(p)).length, eventCount);
  });

  it("completes items of several tasks in one call", async () => {
    const p = project();
    const [t1, t2] = await createTasks(p, "t1", "t2");
    const [a] = await addItems(p, t1!.id, ["a"]);
    const [b] = await addItems(p, t2!.id, ["b"]);
    const { completed } = await p.ok("arbeit_progress_complete", { item_ids: [a.id, b.id] });
    assert.deepEqual(
      completed.map((item: any) => item.task_id),
      [t1!.id, t2!.id],
    );
  });

  it("refuses unknown ids (ENTRY_NOT_FOUND), naming them, and completes none", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const [item] = await addItems(p, task.id, ["a"]);
    const error = await expectCallError(
      p,
      "arbeit_progress_complete",
      { item_ids: [item.id, "prg-zzzzzzzz"] },
      "ENTRY_NOT_FOUND",
    );
    assert.deepEqual(error.details?.missing, ["prg-zzzzzzzz"]);
    const progress = (await p.ok("arbeit_task_get", { task_id: task.id, include: ["progress"] })).progress;
    assert.equal(progress[0].completed, false);
  });

  it("refuses malformed ids (INVALID_ID)", async () => {
    await expectCallError(project(), "arbeit_progress_complete", { item_ids: ["step-1"] }, "INVALID_ID");
  });
});
