import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import {
  createTask,
  createTasks,
  events,
  expectQueryError,
  query,
  queryIds,
  updateTask,
  useProject,
} from "./helpers.js";

/** arbeit_query activity queries: recent_activity, stale_tasks, files_for_task, tasks_for_file, events. */

function note(p: TestProject, taskId: string, content: string): Promise<any> {
  return p.ok("arbeit_context_add", { task_id: taskId, type: "note", content });
}

describe("query recent_activity", () => {
  const project = useProject();

  it("returns context and progress since a duration like 24h, newest first", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await note(p, task.id, "old note");
    await p.ok("arbeit_progress_add", { task_id: task.id, items: ["old step"] });
    p.clock.advanceDays(2);
    await note(p, task.id, "new note");
    p.clock.advance(1000);
    await note(p, task.id, "newer note");
    await p.ok("arbeit_progress_add", { task_id: task.id, items: ["new step"] });
    const data = await query(p, "recent_activity", { since: "24h" });
    assert.equal(data.since, new Date(p.clock.current.getTime() - 86_400_000).toISOString());
    assert.deepEqual(
      data.context.map((entry: any) => entry.content),
      ["newer note", "new note"],
    );
    assert.deepEqual(
      data.progress.map((item: any) => item.content),
      ["new step"],
    );
  });

  it("accepts an ISO-8601 time", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const start = p.clock.current.toISOString();
    await note(p, task.id, "at start");
    p.clock.advanceDays(3);
    await note(p, task.id, "later");
    const data = await query(p, "recent_activity", { since: start });
    assert.equal(data.context.length, 2);
    const later = await query(p, "recent_activity", { since: "2026-01-02T00:00:00+00:00" });
    assert.deepEqual(
      later.context.map((entry: any) => entry.content),
      ["later"],
    );
  });

  it("counts progress completed since then, even if added earlier", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const [item] = (await p.ok("arbeit_progress_add", { task_id: task.id, items: ["step"] })).items;
    p.clock.advanceDays(2);
    await p.ok("arbeit_progress_complete", { item_ids: [item.id] });
    const data = await query(p, "recent_activity", { since: "1h" });
    assert.deepEqual(
      data.progress.map((i: any) => [i.id, i.completed]),
      [[item.id, true]],
    );
  });

  it("narrows to task_id", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await note(p, a!.id, "on a");
    await note(p, b!.id, "on b");
    const data = await query(p, "recent_activity", { since: "1h", task_id: b!.id });
    assert.deepEqual(
      data.context.map((entry: any) => entry.content),
      ["on b"],
    );
  });

  it("refuses a since that is neither a duration nor a time (INVALID_ARGUMENT)", async () => {
    await expectQueryError(project(), "recent_activity", { since: "yesterday" }, "INVALID_ARGUMENT");
  });
});

describe("query stale_tasks", () => {
  const project = useProject();

  it("lists open and in-progress tasks untouched for the given days, oldest first", async () => {
    const p = project();
    const [old, started, finished] = await createTasks(p, "old", "started", "finished");
    await updateTask(p, finished!.id, { status: "completed" });
    p.clock.advance(1000);
    await updateTask(p, started!.id, { status: "in_progress" });
    p.clock.advanceDays(10);
    const fresh = await createTask(p, "fresh");
    assert.deepEqual(await queryIds(p, "stale_tasks", { days: 7 }), [old!.id, started!.id]);
    assert.ok(!(await queryIds(p, "stale_tasks", { days: 7 })).includes(fresh.id));
    assert.deepEqual(await queryIds(p, "stale_tasks", { days: 30 }), []);
  });

  it("treats new context or progress as activity", async () => {
    const p = project();
    const [quiet, busy] = await createTasks(p, "quiet", "busy");
    p.clock.advanceDays(8);
    await note(p, busy!.id, "still on it");
    assert.deepEqual(await queryIds(p, "stale_tasks", { days: 7 }), [quiet!.id]);
  });

  it("requires days (INVALID_ARGUMENT)", async () => {
    await expectQueryError(project(), "stale_tasks", undefined, "INVALID_ARGUMENT");
  });
});

describe("query files_for_task and tasks_for_file", () => {
  const project = useProject();

  async function touch(p: TestProject, taskId: string, path: string, operation: "read" | "write") {
    await p.ok("arbeit_task_start_work", { task_id: taskId });
    await p.service.trackFile({ path, operation }, p.caller);
    await p.ok("arbeit_task_stop_work", { task_id: taskId });
  }

  it("files_for_task lists each path once with its operations, newest first", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await touch(p, task.id, "src/a.ts", "read");
    p.clock.advance(1000);
    await touch(p, task.id, "src/b.ts", "write");
    await touch(p, task.id, "src/a.ts", "write");
    const { files } = await query(p, "files_for_task", { task_id: task.id });
    assert.deepEqual(
      files.map((f: any) => [f.file_path, f.operations]),
      [
        ["src/a.ts", ["read", "write"]],
        ["src/b.ts", ["write"]],
      ],
    );
  });

  it("tasks_for_file lists the tasks that touched a path, given relative or absolute", async () => {
    const p = project();
    const [a, b, other] = await createTasks(p, "a", "b", "other");
    await touch(p, a!.id, "src/shared.ts", "read");
    p.clock.advance(1000);
    await touch(p, b!.id, "src/shared.ts", "write");
    await touch(p, other!.id, "src/other.ts", "write");
    const relative = await query(p, "tasks_for_file", { file_path: "src/shared.ts" });
    assert.equal(relative.file_path, "src/shared.ts");
    assert.deepEqual(
      relative.tasks.map((t: any) => [t.id, t.operations]),
      [
        [b!.id, ["write"]],
        [a!.id, ["read"]],
      ],
    );
    const absolute = await query(p, "tasks_for_file", { file_path: join(p.dir, "src", "shared.ts") });
    assert.deepEqual(absolute.tasks, relative.tasks);
  });

  it("files_for_task refuses an unknown task (TASK_NOT_FOUND)", async () => {
    await expectQueryError(project(), "files_for_task", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND");
  });
});

describe("query events", () => {
  const project = useProject();

  it("returns the log in sequence order with ascending seq numbers", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await updateTask(p, task.id, { title: "t2" });
    await note(p, task.id, "n");
    const log = await events(p);
    assert.deepEqual(
      log.map((e) => e.event_type),
      ["task_created", "task_updated", "context_added"],
    );
    for (let i = 1; i < log.length; i++) assert.ok(log[i]!.seq > log[i - 1]!.seq);
    for (const event of log) assert.match(event.id, /^evt-[a-z0-9]{8}$/);
  });

  it("pages with after_seq and limit, reporting has_more and the next cursor", async () => {
    const p = project();
    await createTasks(p, "a", "b", "c", "d", "e");
    const all = await events(p);
    const first = await query(p, "events", { limit: 2 });
    assert.deepEqual(
      first.events.map((e: any) => e.seq),
      all.slice(0, 2).map((e) => e.seq),
    );
    assert.equal(first.has_more, true);
    assert.equal(first.next_after_seq, all[1]!.seq);
    const seen = [...first.events];
    let cursor = first.next_after_seq;
    for (let more = true; more; ) {
      const page = await query(p, "events", { after_seq: cursor, limit: 2 });
      seen.push(...page.events);
      cursor = page.next_after_seq;
      more = page.has_more;
    }
    assert.deepEqual(seen, all);
    const end = await query(p, "events", { after_seq: cursor });
    assert.deepEqual([end.events, end.has_more, end.next_after_seq], [[], false, cursor]);
  });

  it("filters by task_id and event_types", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await updateTask(p, a!.id, { title: "a2" });
    assert.deepEqual(
      (await events(p, { task_id: a!.id })).map((e) => e.event_type),
      ["task_created", "task_updated"],
    );
    assert.deepEqual(
      (await events(p, { event_types: ["task_created"] })).map((e) => e.task_id),
      [a!.id, b!.id],
    );
  });
});
