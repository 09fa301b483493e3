import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { INCLUDE_SECTIONS } from "../../src/service/briefing.js";
import { createTask, createTasks, expectCallError, FILLED, getTask, updateTask, useProject } from "./helpers.js";

describe("arbeit_task_create", () => {
  const project = useProject();

  it("creates an open, untyped task with the documented defaults", async () => {
    const p = project();
    const task = await createTask(p, "Write docs");
    assert.match(task.id, /^tkt-[a-z0-9]{8}$/);
    assert.equal(task.title, "Write docs");
    assert.equal(task.status, "open");
    assert.equal(task.type, null);
    assert.equal(task.priority, 2);
    assert.equal(task.list_id, "default");
    assert.equal(task.version, 1);
    assert.equal(task.parent_id, null);
    assert.deepEqual(task.blocked_by, []);
    assert.equal(task.blocked, false);
    assert.equal(task.created_at, p.clock.current.toISOString());
    assert.equal(task.updated_at, task.created_at);
  });

  it("stores every field it is given", async () => {
    const p = project();
    const [parent, blocker] = await createTasks(p, "parent", "blocker");
    const task = await createTask(p, "Full", {
      type: "feature",
      ...FILLED,
      parent_id: parent!.id,
      blocked_by: [blocker!.id],
      priority: 0,
      owner: "alice",
      active_form: "Building it",
      list_id: "team-a",
    });
    assert.equal(task.type, "feature");
    assert.equal(task.intent, FILLED.intent);
    assert.equal(task.description, FILLED.description);
    assert.equal(task.plan, FILLED.plan);
    assert.equal(task.parent_id, parent!.id);
    assert.deepEqual(task.blocked_by, [blocker!.id]);
    assert.equal(task.blocked, true);
    assert.equal(task.priority, 0);
    assert.equal(task.owner, "alice");
    assert.equal(task.active_form, "Building it");
    assert.equal(task.list_id, "team-a");
  });

  it("gives every task a distinct id", async () => {
    const p = project();
    const tasks = await createTasks(p, "a", "b", "c", "d", "e");
    assert.equal(new Set(tasks.map((task) => task.id)).size, 5);
  });

  it("returns no recommendations for a plain task", async () => {
    const p = project();
    const data = await p.ok("arbeit_task_create", { title: "plain" });
    assert.equal(data.recommendations, undefined);
  });
});

describe("arbeit_task_get", () => {
  const project = useProject();

  it("returns the task alone when no include is given", async () => {
    const p = project();
    const task = await createTask(p, "solo");
    const data = await p.ok("arbeit_task_get", { task_id: task.id });
    assert.deepEqual(Object.keys(data), ["task"]);
    assert.deepEqual(data.task, task);
  });

  it("answers TASK_NOT_FOUND for an unknown id", async () => {
    await expectCallError(project(), "arbeit_task_get", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND");
  });

  it("adds each of the 13 briefing sections when asked", async () => {
    const p = project();
    const [parent, blocker, blocked] = await createTasks(p, "parent", "blocker", "blocked");
    const task = await createTask(p, "focus", { parent_id: parent!.id, blocked_by: [blocker!.id] });
    const child = await createTask(p, "child", { parent_id: task.id });
    await updateTask(p, blocked!.id, { blocked_by: [task.id] });
    const first = (await p.ok("arbeit_context_add", { task_id: task.id, type: "decision", content: "old" })).entry;
    await p.ok("arbeit_context_add", {
      task_id: task.id,
      type: "decision",
      content: "new",
      supersede_entry_id: first.id,
    });
    const [done] = (await p.ok("arbeit_progress_add", { task_id: task.id, items: ["one", "two"] })).items;
    await p.ok("arbeit_progress_complete", { item_ids: [done.id] });
    await p.ok("arbeit_task_start_work", { task_id: task.id });
    await p.service.trackFile({ path: "src/a.ts", operation: "write" }, p.caller);

    assert.equal(INCLUDE_SECTIONS.length, 13);
    const include = [...INCLUDE_SECTIONS];
    const data = await p.ok("arbeit_task_get", { task_id: task.id, include });
    assert.deepEqual(Object.keys(data).sort(), ["task", ...include].sort());
    assert.equal(data.relationships.length, 4);
    assert.deepEqual(data.commits, []);
    assert.deepEqual(
      data.context.map((entry: any) => entry.content),
      ["new"],
    );
    assert.deepEqual(
      data.context_all.map((entry: any) => entry.content),
      ["old", "new"],
    );
    assert.equal(data.progress.length, 2);
    assert.equal(data.progress_summary.total, 2);
    assert.equal(data.progress_summary.completed, 1);
    assert.equal(data.progress_summary.percent, 50);
    assert.equal(data.parent.id, parent!.id);
    assert.deepEqual(
      data.children.map((t: any) => t.id),
      [child.id],
    );
    assert.deepEqual(
      data.blocked_by.map((t: any) => t.id),
      [blocker!.id],
    );
    assert.deepEqual(
      data.blocking.map((t: any) => t.id),
      [blocked!.id],
    );
    assert.deepEqual(
      data.files.map((f: any) => f.file_path),
      ["src/a.ts"],
    );
    assert.deepEqual(
      data.sessions.map((s: any) => s.session_id),
      [p.caller.session],
    );
    assert.ok(data.recent_events.some((event: any) => event.event_type === "work_started"));
  });

  it("gives parent null for a root task", async () => {
    const p = project();
    const task = await createTask(p, "root");
    const data = await p.ok("arbeit_task_get", { task_id: task.id, include: ["parent"] });
    assert.equal(data.parent, null);
  });

  it("lists related tasks as summaries without the heavy text fields", async () => {
    const p = project();
    const parent = await createTask(p, "parent", { type: "epic", intent: "why", description: "what" });
    const child = await createTask(p, "child", { parent_id: parent.id });
    const data = await p.ok("arbeit_task_get", { task_id: child.id, include: ["parent"] });
    assert.equal(data.parent.id, parent.id);
    assert.equal("intent" in data.parent, false);
    assert.equal("description" in data.parent, false);
  });
});

describe("arbeit_task_update", () => {
  const project = useProject();

  it("changes the fields it is given and leaves the rest", async () => {
    const p = project();
    const task = await createTask(p, "before", { owner: "alice", priority: 3 });
    const { task: after } = await updateTask(p, task.id, { title: "after", priority: 1, active_form: "Doing it" });
    assert.equal(after.title, "after");
    assert.equal(after.priority, 1);
    assert.equal(after.active_form, "Doing it");
    assert.equal(after.owner, "alice");
  });

  it("stamps updated_at with the time of the change", async () => {
    const p = project();
    const task = await createTask(p, "t");
    p.clock.advance(60_000);
    const { task: after } = await updateTask(p, task.id, { title: "t2" });
    assert.equal(after.updated_at, p.clock.current.toISOString());
    assert.equal(after.created_at, task.created_at);
  });

  it("clears nullable fields when given null", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "chore", owner: "bob", active_form: "x" });
    const { task: after } = await updateTask(p, task.id, { type: null, owner: null, active_form: null });
    assert.equal(after.type, null);
    assert.equal(after.owner, null);
    assert.equal(after.active_form, null);
  });

  it("moves through every status", async () => {
    const p = project();
    const task = await createTask(p, "t");
    for (const status of ["in_progress", "completed", "open", "cancelled"]) {
      const { task: after } = await updateTask(p, task.id, { status });
      assert.equal(after.status, status);
    }
  });

  it("re-parents with parent_id and detaches with parent_id null", async () => {
    const p = project();
    const [a, b, child] = await createTasks(p, "a", "b", "child");
    assert.equal((await updateTask(p, child!.id, { parent_id: a!.id })).task.parent_id, a!.id);
    assert.equal((await updateTask(p, child!.id, { parent_id: b!.id })).task.parent_id, b!.id);
    assert.deepEqual((await p.ok("arbeit_query", { query: "children_of", params: { task_id: a!.id } })).tasks, []);
    assert.equal((await updateTask(p, child!.id, { parent_id: null })).task.parent_id, null);
  });

  it("replaces the whole blocked_by list", async () => {
    const p = project();
    const [a, b, c, task] = await createTasks(p, "a", "b", "c", "task");
    await updateTask(p, task!.id, { blocked_by: [a!.id, b!.id] });
    const { task: after } = await updateTask(p, task!.id, { blocked_by: [b!.id, c!.id] });
    assert.deepEqual([...after.blocked_by].sort(), [b!.id, c!.id].sort());
    assert.deepEqual((await updateTask(p, task!.id, { blocked_by: [] })).task.blocked_by, []);
  });

  it("sets an intent that was never set", async () => {
    const p = project();
    const task = await createTask(p, "t");
    assert.equal((await updateTask(p, task.id, { intent: "because" })).task.intent, "because");
  });

  it("accepts the current intent again as a no-op", async () => {
    const p = project();
    const task = await createTask(p, "t", { intent: "because" });
    assert.equal((await updateTask(p, task.id, { intent: "because" })).task.version, task.version);
  });

  it("applies a change when expected_version matches", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const { task: after } = await updateTask(p, task.id, { title: "t2", expected_version: task.version });
    assert.equal(after.version, task.version + 1);
  });

  it("answers TASK_NOT_FOUND for an unknown id", async () => {
    await expectCallError(project(), "arbeit_task_update", { task_id: "tkt-zzzzzzzz", title: "x" }, "TASK_NOT_FOUND");
  });
});

describe("arbeit_task_delete", () => {
  const project = useProject();

  it("answers deleted: true and hides the task", async () => {
    const p = project();
    const task = await createTask(p, "doomed");
    assert.deepEqual(await p.ok("arbeit_task_delete", { task_id: task.id }), { deleted: true });
    await expectCallError(p, "arbeit_task_get", { task_id: task.id }, "TASK_NOT_FOUND");
  });

  it("answers TASK_NOT_FOUND for an unknown or already deleted task", async () => {
    const p = project();
    const task = await createTask(p, "doomed");
    await p.ok("arbeit_task_delete", { task_id: task.id });
    await expectCallError(p, "arbeit_task_delete", { task_id: task.id }, "TASK_NOT_FOUND");
    await expectCallError(p, "arbeit_task_delete", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND");
  });

  it("refuses a task with live children (HAS_CHILDREN), listing them", async () => {
    const p = project();
    const parent = await createTask(p, "parent");
    const child = await createTask(p, "child", { parent_id: parent.id });
    const error = await expectCallError(p, "arbeit_task_delete", { task_id: parent.id }, "HAS_CHILDREN");
    assert.deepEqual(error.details?.children, [child.id]);
    assert.equal((await getTask(p, parent.id)).id, parent.id);
  });

  it("allows deleting a parent once its children are deleted or re-parented", async () => {
    const p = project();
    const [parent, other] = await createTasks(p, "parent", "other");
    const a = await createTask(p, "a", { parent_id: parent!.id });
    const b = await createTask(p, "b", { parent_id: parent!.id });
    await p.ok("arbeit_task_delete", { task_id: a.id });
    await updateTask(p, b.id, { parent_id: other!.id });
    assert.deepEqual(await p.ok("arbeit_task_delete", { task_id: parent!.id }), { deleted: true });
  });
});
