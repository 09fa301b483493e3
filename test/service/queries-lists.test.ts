import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TEMPLATES } from "../../src/domain/templates.js";
import { QUERY_NAMES } from "../../src/service/queries.js";
import {
  createTask,
  createTasks,
  expectQueryError,
  FILLED,
  query,
  queryIds,
  updateTask,
  useProject,
} from "./helpers.js";

/** arbeit_query list queries: tasks, active_tasks, ready, blocked_tasks, blocking_tasks, templates. */

describe("arbeit_query catalogue", () => {
  it("offers every named query, ready and events included", () => {
    const documented = [
      "tasks",
      "active_tasks",
      "blocked_tasks",
      "blocking_tasks",
      "children_of",
      "descendants_of",
      "ancestors_of",
      "recent_activity",
      "stale_tasks",
      "files_for_task",
      "tasks_for_file",
      "templates",
      "ready",
      "events",
    ];
    for (const name of documented) assert.ok((QUERY_NAMES as string[]).includes(name), name);
  });

  const project = useProject();

  it("refuses an unknown query name (UNKNOWN_QUERY)", async () => {
    await expectQueryError(project(), "root_tasks", undefined, "UNKNOWN_QUERY");
  });

  it("refuses unknown params (INVALID_ARGUMENT)", async () => {
    await expectQueryError(project(), "ready", { colour: "red" }, "INVALID_ARGUMENT");
  });

  it("echoes the query name in its answer", async () => {
    assert.equal((await query(project(), "tasks")).query, "tasks");
  });
});

describe("query tasks", () => {
  const project = useProject();

  it("lists every live task, priority first, then age", async () => {
    const p = project();
    const low = await createTask(p, "low", { priority: 4 });
    p.clock.advance(1000);
    const high = await createTask(p, "high", { priority: 0 });
    p.clock.advance(1000);
    const normal = await createTask(p, "normal");
    assert.deepEqual(await queryIds(p, "tasks"), [high.id, normal.id, low.id]);
  });

  it("filters by one status or a list of statuses", async () => {
    const p = project();
    const [open, doing, done, dropped] = await createTasks(p, "open", "doing", "done", "dropped");
    await updateTask(p, doing!.id, { status: "in_progress" });
    await updateTask(p, done!.id, { status: "completed" });
    await updateTask(p, dropped!.id, { status: "cancelled" });
    assert.deepEqual(await queryIds(p, "tasks", { status: "completed" }), [done!.id]);
    assert.deepEqual(
      (await queryIds(p, "tasks", { status: ["open", "cancelled"] })).sort(),
      [open!.id, dropped!.id].sort(),
    );
  });

  it("refuses an unknown status in the filter (INVALID_STATUS)", async () => {
    const p = project();
    await expectQueryError(p, "tasks", { status: "done" }, "INVALID_STATUS");
    await expectQueryError(p, "tasks", { status: ["open", "done"] }, "INVALID_STATUS");
  });

  it("lists root tasks for parent_id null and children for a parent id", async () => {
    const p = project();
    const [root, other] = await createTasks(p, "root", "other");
    const child = await createTask(p, "child", { parent_id: root!.id });
    assert.deepEqual((await queryIds(p, "tasks", { parent_id: null })).sort(), [root!.id, other!.id].sort());
    assert.deepEqual(await queryIds(p, "tasks", { parent_id: root!.id }), [child.id]);
  });

  it("filters by type and owner", async () => {
    const p = project();
    const bug = await createTask(p, "bug", { type: "bug", owner: "alice" });
    await createTask(p, "chore", { type: "chore", owner: "bob" });
    assert.deepEqual(await queryIds(p, "tasks", { type: "bug" }), [bug.id]);
    assert.deepEqual(await queryIds(p, "tasks", { owner: "alice" }), [bug.id]);
  });

  it("pages with limit and cursor and says whether more rows exist", async () => {
    const p = project();
    const ids = (await createTasks(p, "a", "b", "c")).map((task) => task.id).sort();
    const first = await query(p, "tasks", { limit: 2 });
    assert.deepEqual(
      first.tasks.map((t: any) => t.id),
      ids.slice(0, 2),
    );
    assert.equal(first.has_more, true);
    const second = await query(p, "tasks", { limit: 2, cursor: first.next_cursor });
    assert.deepEqual(
      second.tasks.map((t: any) => t.id),
      ids.slice(2),
    );
    assert.equal(second.has_more, false);
  });

  it("returns summaries without intent, description and plan unless full is set", async () => {
    const p = project();
    await createTask(p, "t", { type: "feature", ...FILLED });
    const [summary] = (await query(p, "tasks")).tasks;
    assert.equal("plan" in summary, false);
    const [full] = (await query(p, "tasks", { full: true })).tasks;
    assert.equal(full.plan, FILLED.plan);
  });

  it("scopes to a list with list_id", async () => {
    const p = project();
    const mine = await createTask(p, "mine", { list_id: "team-a" });
    await createTask(p, "theirs", { list_id: "team-b" });
    assert.deepEqual(await queryIds(p, "tasks", { list_id: "team-a" }), [mine.id]);
  });
});

describe("query active_tasks", () => {
  const project = useProject();

  it("lists open and in-progress tasks only", async () => {
    const p = project();
    const [open, doing, done, dropped] = await createTasks(p, "open", "doing", "done", "dropped");
    await updateTask(p, doing!.id, { status: "in_progress" });
    await updateTask(p, done!.id, { status: "completed" });
    await updateTask(p, dropped!.id, { status: "cancelled" });
    assert.deepEqual((await queryIds(p, "active_tasks")).sort(), [open!.id, doing!.id].sort());
  });

  it("narrows to the children of parent_id, or to roots with null", async () => {
    const p = project();
    const parent = await createTask(p, "parent");
    const child = await createTask(p, "child", { parent_id: parent.id });
    assert.deepEqual(await queryIds(p, "active_tasks", { parent_id: parent.id }), [child.id]);
    assert.deepEqual(await queryIds(p, "active_tasks", { parent_id: null }), [parent.id]);
  });
});

describe("query ready", () => {
  const project = useProject();

  it("orders by priority, then age, then id", async () => {
    const p = project();
    const older = await createTask(p, "older", { priority: 3 });
    p.clock.advance(1000);
    const urgent = await createTask(p, "urgent", { priority: 1 });
    const sameTime = await createTasks(p, "twin 1", "twin 2", "twin 3");
    p.clock.advance(1000);
    const newer = await createTask(p, "newer", { priority: 3 });
    const twins = sameTime.map((t) => t.id).sort();
    assert.deepEqual(await queryIds(p, "ready"), [urgent.id, ...twins, older.id, newer.id]);
  });

  it("leaves out blocked, deleted and non-open tasks", async () => {
    const p = project();
    const [ready, blocker, doing, done, dropped, gone] = await createTasks(
      p,
      "ready",
      "blocker",
      "doing",
      "done",
      "dropped",
      "gone",
    );
    await createTask(p, "blocked", { blocked_by: [blocker!.id] });
    await updateTask(p, doing!.id, { status: "in_progress" });
    await updateTask(p, done!.id, { status: "completed" });
    await updateTask(p, dropped!.id, { status: "cancelled" });
    await p.ok("arbeit_task_delete", { task_id: gone!.id });
    assert.deepEqual((await queryIds(p, "ready")).sort(), [ready!.id, blocker!.id].sort());
  });

  it("includes a task once its blockers are finished", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    const task = await createTask(p, "task", { blocked_by: [blocker.id] });
    await updateTask(p, blocker.id, { status: "completed" });
    assert.deepEqual(await queryIds(p, "ready"), [task.id]);
  });
});

describe("query blocked_tasks and blocking_tasks", () => {
  const project = useProject();

  it("lists the tasks waiting on an unfinished blocker, and those blockers", async () => {
    const p = project();
    const [blocker, free] = await createTasks(p, "blocker", "free");
    const blocked = await createTask(p, "blocked", { blocked_by: [blocker!.id] });
    assert.deepEqual(await queryIds(p, "blocked_tasks"), [blocked.id]);
    assert.deepEqual(await queryIds(p, "blocking_tasks"), [blocker!.id]);
    assert.ok(!(await queryIds(p, "blocked_tasks")).includes(free!.id));
  });

  it("forgets both once the blocker is completed", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    await createTask(p, "blocked", { blocked_by: [blocker.id] });
    await updateTask(p, blocker.id, { status: "completed" });
    assert.deepEqual(await queryIds(p, "blocked_tasks"), []);
    assert.deepEqual(await queryIds(p, "blocking_tasks"), []);
  });

  it("does not count a blocker holding up only finished tasks as blocking", async () => {
    const p = project();
    const blocker = await createTask(p, "blocker");
    const blocked = await createTask(p, "blocked", { blocked_by: [blocker.id] });
    await updateTask(p, blocked.id, { status: "cancelled" });
    assert.deepEqual(await queryIds(p, "blocking_tasks"), []);
  });

  it("filters both by status", async () => {
    const p = project();
    const [b1, b2] = await createTasks(p, "b1", "b2");
    const waiting = await createTask(p, "waiting", { blocked_by: [b1!.id] });
    const started = await createTask(p, "started", { blocked_by: [b2!.id] });
    await updateTask(p, started.id, { status: "in_progress" });
    await updateTask(p, b2!.id, { status: "in_progress" });
    assert.deepEqual(await queryIds(p, "blocked_tasks", { status: "open" }), [waiting.id]);
    assert.deepEqual(await queryIds(p, "blocked_tasks", { status: ["in_progress"] }), [started.id]);
    assert.deepEqual(await queryIds(p, "blocking_tasks", { status: "in_progress" }), [b2!.id]);
  });
});

describe("query templates", () => {
  const project = useProject();

  it("lists the five templates with their type and plan stub", async () => {
    const { templates } = await query(project(), "templates");
    assert.deepEqual(
      templates.map((t: any) => [t.name, t.type]),
      Object.values(TEMPLATES).map((t) => [t.name, t.type]),
    );
    for (const template of templates) assert.match(template.plan_template, /^Plan:\n- /);
  });
});
