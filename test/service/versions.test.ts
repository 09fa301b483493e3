import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import { createTask, createTasks, expectCallError, getTask, relateOk, updateTask, useProject } from "./helpers.js";

/** Task versions: +1 per change, guarded by expected_version. */

async function version(p: TestProject, taskId: string): Promise<number> {
  return (await getTask(p, taskId)).version;
}

describe("task version", () => {
  const project = useProject();

  it("starts at 1", async () => {
    assert.equal((await createTask(project(), "t")).version, 1);
  });

  it("goes up by one per update, however many fields it changes", async () => {
    const p = project();
    const [task, parent, blocker] = await createTasks(p, "t", "parent", "blocker");
    assert.equal((await updateTask(p, task!.id, { title: "t2" })).task.version, 2);
    const all = { title: "t3", priority: 0, owner: "o", parent_id: parent!.id, blocked_by: [blocker!.id] };
    assert.equal((await updateTask(p, task!.id, all)).task.version, 3);
  });

  it("goes up when update changes only parent_id or only blocked_by", async () => {
    const p = project();
    const [task, parent, blocker] = await createTasks(p, "t", "parent", "blocker");
    assert.equal((await updateTask(p, task!.id, { parent_id: parent!.id })).task.version, 2);
    assert.equal((await updateTask(p, task!.id, { blocked_by: [blocker!.id] })).task.version, 3);
  });

  it("goes up on the child when arbeit_relationship adds or removes its parent", async () => {
    const p = project();
    const [parent, child] = await createTasks(p, "parent", "child");
    await relateOk(p, "add", parent!.id, "parent_of", child!.id);
    assert.equal(await version(p, child!.id), 2);
    await relateOk(p, "remove", child!.id, "child_of", parent!.id);
    assert.equal(await version(p, child!.id), 3);
    assert.equal(await version(p, parent!.id), 1, "the parent's own fields did not change");
  });

  it("goes up on the blocked task when arbeit_relationship adds or removes a blocker", async () => {
    const p = project();
    const [blocker, blocked] = await createTasks(p, "blocker", "blocked");
    await relateOk(p, "add", blocked!.id, "blocked_by", blocker!.id);
    assert.equal(await version(p, blocked!.id), 2);
    await relateOk(p, "remove", blocker!.id, "blocks", blocked!.id);
    assert.equal(await version(p, blocked!.id), 3);
    assert.equal(await version(p, blocker!.id), 1);
  });

  it("stays put for soft relationships, which no task field shows", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await relateOk(p, "add", a!.id, "relates_to", b!.id);
    await relateOk(p, "add", a!.id, "duplicates", b!.id);
    assert.deepEqual([await version(p, a!.id), await version(p, b!.id)], [1, 1]);
  });

  it("goes up when start_work moves the task to in_progress", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const started = (await p.ok("arbeit_task_start_work", { task_id: task.id })).task;
    // Starting work also claims the task, which is a change of its own (owner, lease).
    assert.ok(started.version > task.version);
    assert.equal((await getTask(p, task.id)).version, started.version);
  });
});

describe("expected_version", () => {
  const project = useProject();

  it("refuses a stale version (VERSION_CONFLICT) carrying the current version", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await updateTask(p, task.id, { title: "someone else" });
    const error = await expectCallError(
      p,
      "arbeit_task_update",
      { task_id: task.id, title: "mine", expected_version: 1 },
      "VERSION_CONFLICT",
    );
    assert.equal(error.details?.current_version, 2);
    assert.equal(error.details?.expected_version, 1);
    assert.equal((await getTask(p, task.id)).title, "someone else");
  });

  it("refuses a stale version even when the update would change nothing", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await updateTask(p, task.id, { title: "t2" });
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, expected_version: 1 }, "VERSION_CONFLICT");
  });

  it("lets exactly one of two writers holding the same version win", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const results = await Promise.all(
      ["first", "second"].map((title) =>
        p.call("arbeit_task_update", { task_id: task.id, title, expected_version: task.version }),
      ),
    );
    assert.deepEqual(results.map((r) => r.success).sort(), [false, true]);
    assert.equal(await version(p, task.id), 2);
  });
});
