import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTask, createTasks, relateOk, updateTask, useProject, warningCodes } from "./helpers.js";

/** The four warnings: attached to successful answers, never thrown. */

describe("HAS_INCOMPLETE_CHILDREN", () => {
  const project = useProject();

  it("warns when a task is completed while a child is unfinished", async () => {
    const p = project();
    const parent = await createTask(p, "parent");
    const child = await createTask(p, "child", { parent_id: parent.id });
    const envelope = await p.call("arbeit_task_update", { task_id: parent.id, status: "completed" });
    assert.equal(envelope.success, true);
    assert.deepEqual(warningCodes(envelope), ["HAS_INCOMPLETE_CHILDREN"]);
    assert.match(envelope.warnings![0]!.message, new RegExp(child.id));
  });

  it("stays quiet when every child is completed or cancelled", async () => {
    const p = project();
    const parent = await createTask(p, "parent");
    const a = await createTask(p, "a", { parent_id: parent.id });
    const b = await createTask(p, "b", { parent_id: parent.id });
    await updateTask(p, a.id, { status: "completed" });
    await updateTask(p, b.id, { status: "cancelled" });
    const envelope = await p.call("arbeit_task_update", { task_id: parent.id, status: "completed" });
    assert.equal(envelope.warnings, undefined);
  });
});

describe("HAS_BLOCKERS", () => {
  const project = useProject();

  it("warns when work starts on a blocked task", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    const task = await createTask(p, "task", { blocked_by: [blocker.id] });
    const envelope = await p.call("arbeit_task_start_work", { task_id: task.id });
    assert.equal(envelope.success, true);
    assert.deepEqual(warningCodes(envelope), ["HAS_BLOCKERS"]);
  });

  it("warns when a blocked task is moved to in_progress by update", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    const task = await createTask(p, "task", { blocked_by: [blocker.id] });
    const envelope = await p.call("arbeit_task_update", { task_id: task.id, status: "in_progress" });
    assert.equal(envelope.success, true);
    assert.deepEqual(warningCodes(envelope), ["HAS_BLOCKERS"]);
  });

  it("lists only the blockers still unfinished, on start_work, update and claim", async () => {
    const p = project();
    const [done, dropped, open] = await createTasks(p, "done", "dropped", "open");
    await updateTask(p, done!.id, { status: "completed" });
    await updateTask(p, dropped!.id, { status: "cancelled" });
    const blocked_by = [done!.id, dropped!.id, open!.id];
    const viaWork = await createTask(p, "via work", { blocked_by });
    const viaUpdate = await createTask(p, "via update", { blocked_by });
    const viaClaim = await createTask(p, "via claim", { blocked_by });
    const envelopes = [
      await p.call("arbeit_task_start_work", { task_id: viaWork.id }),
      await p.call("arbeit_task_update", { task_id: viaUpdate.id, status: "in_progress" }),
      await p.call("arbeit_task_claim", { task_id: viaClaim.id }),
    ];
    for (const envelope of envelopes) {
      assert.deepEqual(warningCodes(envelope), ["HAS_BLOCKERS"]);
      const message = envelope.warnings![0]!.message;
      assert.match(message, new RegExp(`\\(${open!.id}\\)`));
      assert.doesNotMatch(message, new RegExp(`${done!.id}|${dropped!.id}`));
    }
  });

  it("stays quiet once the blockers are finished", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    const task = await createTask(p, "task", { blocked_by: [blocker.id] });
    await updateTask(p, blocker.id, { status: "completed" });
    assert.equal((await p.call("arbeit_task_start_work", { task_id: task.id })).warnings, undefined);
  });
});

describe("STALE_CONTEXT", () => {
  const project = useProject();

  it("warns on task_get when the newest context is over 7 days old", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await p.ok("arbeit_context_add", { task_id: task.id, type: "decision", content: "use X" });
    p.clock.advanceDays(8);
    const envelope = await p.call("arbeit_task_get", { task_id: task.id });
    assert.deepEqual(warningCodes(envelope), ["STALE_CONTEXT"]);
  });

  it("warns on start_work too", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await p.ok("arbeit_context_add", { task_id: task.id, type: "decision", content: "use X" });
    p.clock.advanceDays(8);
    assert.deepEqual(warningCodes(await p.call("arbeit_task_start_work", { task_id: task.id })), ["STALE_CONTEXT"]);
  });

  it("stays quiet within 7 days, without context, or once fresh context is added", async () => {
    const p = project();
    const [withContext, without] = await createTasks(p, "with", "without");
    await p.ok("arbeit_context_add", { task_id: withContext!.id, type: "note", content: "n" });
    p.clock.advanceDays(6);
    assert.equal((await p.call("arbeit_task_get", { task_id: withContext!.id })).warnings, undefined);
    p.clock.advanceDays(2);
    assert.equal((await p.call("arbeit_task_get", { task_id: without!.id })).warnings, undefined);
    await p.ok("arbeit_context_add", { task_id: withContext!.id, type: "note", content: "still true" });
    assert.equal((await p.call("arbeit_task_get", { task_id: withContext!.id })).warnings, undefined);
  });
});

describe("ORPHAN_RELATIONSHIPS", () => {
  const project = useProject();

  it("warns on task_get when a relationship points at a deleted task", async () => {
    const p = project();
    const [task, other] = await createTasks(p, "task", "other");
    const rel = (await relateOk(p, "add", task!.id, "relates_to", other!.id)).relationship;
    await p.ok("arbeit_task_delete", { task_id: other!.id });
    const envelope = await p.call("arbeit_task_get", { task_id: task!.id });
    assert.deepEqual(warningCodes(envelope), ["ORPHAN_RELATIONSHIPS"]);
    assert.match(envelope.warnings![0]!.message, new RegExp(rel.id));
  });

  it("warns about a deleted blocker and a deleted child alike", async () => {
    const p = project();
    const [task, blocker] = await createTasks(p, "task", "blocker");
    await updateTask(p, task!.id, { blocked_by: [blocker!.id] });
    const child = await createTask(p, "child", { parent_id: blocker!.id });
    await p.ok("arbeit_task_delete", { task_id: child.id });
    assert.deepEqual(warningCodes(await p.call("arbeit_task_get", { task_id: blocker!.id })), ["ORPHAN_RELATIONSHIPS"]);
    await p.ok("arbeit_task_delete", { task_id: blocker!.id });
    assert.deepEqual(warningCodes(await p.call("arbeit_task_get", { task_id: task!.id })), ["ORPHAN_RELATIONSHIPS"]);
  });

  it("goes away once the orphan is removed with arbeit_relationship", async () => {
    const p = project();
    const [task, other] = await createTasks(p, "task", "other");
    await relateOk(p, "add", task!.id, "duplicates", other!.id);
    await p.ok("arbeit_task_delete", { task_id: other!.id });
    assert.deepEqual(await relateOk(p, "remove", other!.id, "duplicated_by", task!.id), { removed: true });
    assert.equal((await p.call("arbeit_task_get", { task_id: task!.id })).warnings, undefined);
  });
});
