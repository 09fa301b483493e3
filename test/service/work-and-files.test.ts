import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import { createTask, createTasks, events, expectCallError, getTask, query, useProject } from "./helpers.js";

/** arbeit_task_start_work / stop_work and file tracking. */

function startWork(p: TestProject, taskId: string, session?: string): Promise<any> {
  return p.ok("arbeit_task_start_work", { task_id: taskId }, session ? { session } : {});
}

function stopWork(p: TestProject, taskId: string, session?: string): Promise<any> {
  return p.ok("arbeit_task_stop_work", { task_id: taskId }, session ? { session } : {});
}

/** Records a file read or write the way a front end hook does; returns the service's answer. */
async function track(p: TestProject, path: string, operation: "read" | "write" = "write", session?: string) {
  const result = await p.service.trackFile({ path, operation }, session ? { ...p.caller, session } : p.caller);
  return result.data as any;
}

async function trackedPaths(p: TestProject, taskId: string): Promise<string[]> {
  return ((await query(p, "files_for_task", { task_id: taskId })).files as any[]).map((file) => file.file_path);
}

describe("arbeit_task_start_work", () => {
  const project = useProject();

  it("moves an open task to in_progress and links the session", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const data = await startWork(p, task.id);
    assert.equal(data.task.status, "in_progress");
    assert.equal(data.session_linked, true);
    assert.equal(data.session_id, p.caller.session);
    const { sessions } = await p.ok("arbeit_task_get", { task_id: task.id, include: ["sessions"] });
    assert.equal(sessions.length, 1);
    assert.match(sessions[0].id, /^ses-[a-z0-9]{8}$/);
    assert.equal(sessions[0].session_id, p.caller.session);
    assert.equal(sessions[0].agent, p.caller.agent);
  });

  it("leaves a task that is not open in its status", async () => {
    const p = project();
    const task = await createTask(p, "t", { status: "completed" });
    assert.equal((await startWork(p, task.id)).task.status, "completed");
  });

  it("is a no-op when the session already works on the same task", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const first = await startWork(p, task.id);
    const eventCount = (await events(p)).length;
    const again = await startWork(p, task.id);
    assert.equal(again.session_linked, false);
    assert.equal(again.task.version, first.task.version);
    assert.equal((await events(p)).length, eventCount);
  });

  it("refuses a second task in the same session (ALREADY_WORKING), naming the current one", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await startWork(p, a!.id);
    const error = await expectCallError(p, "arbeit_task_start_work", { task_id: b!.id }, "ALREADY_WORKING");
    assert.equal(error.details?.task_id, a!.id);
    assert.equal((await getTask(p, b!.id)).status, "open");
  });

  it("lets another session work on another task at the same time", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await startWork(p, a!.id, "ses-one");
    assert.equal((await startWork(p, b!.id, "ses-two")).session_linked, true);
  });

  it("lets two sessions work on the same task one after the other, each linked once", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id, "ses-one");
    await expectCallError(p, "arbeit_task_start_work", { task_id: task.id }, "ALREADY_CLAIMED", { session: "ses-two" });
    await stopWork(p, task.id, "ses-one");
    await startWork(p, task.id, "ses-two");
    await startWork(p, task.id, "ses-two");
    const { sessions } = await p.ok("arbeit_task_get", { task_id: task.id, include: ["sessions"] });
    assert.deepEqual(
      sessions.map((link: any) => link.session_id),
      ["ses-one", "ses-two"],
    );
  });

  it("takes the session from the optional session argument", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const data = await p.ok("arbeit_task_start_work", { task_id: task.id, session: "ses-named" });
    assert.equal(data.session_id, "ses-named");
  });

  it("works as the session agent:<name> for a caller without a session", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const started = await p.ok("arbeit_task_start_work", { task_id: task.id }, { session: null });
    assert.equal(started.session_id, "agent:tester");
    assert.equal(started.task.claim_session, "agent:tester");
    assert.equal((await track(p, "a.ts", "write", "agent:tester")).tracked, true);
  });

  it("refuses an unknown task (TASK_NOT_FOUND)", async () => {
    await expectCallError(project(), "arbeit_task_start_work", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND");
  });

  it("treats work on a task deleted since as ended", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await startWork(p, a!.id);
    await p.ok("arbeit_task_delete", { task_id: a!.id });
    assert.equal((await startWork(p, b!.id)).session_linked, true);
  });
});

describe("arbeit_task_stop_work", () => {
  const project = useProject();

  it("ends the active work, keeps the status, and counts the files tracked", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    await track(p, "src/a.ts", "read");
    await track(p, "src/a.ts", "write");
    await track(p, "src/b.ts", "write");
    assert.deepEqual(await stopWork(p, task.id), { stopped: true, files_tracked: 2, claim_released: true });
    assert.equal((await getTask(p, task.id)).status, "in_progress");
  });

  it("lets the session start another task afterwards", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await startWork(p, a!.id);
    await stopWork(p, a!.id);
    assert.equal((await startWork(p, b!.id)).session_linked, true);
  });

  it("answers stopped: false for a task the session is not working on", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    assert.deepEqual(await stopWork(p, a!.id), { stopped: false, files_tracked: 0, claim_released: false });
    await startWork(p, a!.id);
    assert.deepEqual(await stopWork(p, b!.id), { stopped: false, files_tracked: 0, claim_released: false });
    assert.deepEqual(await stopWork(p, a!.id, "ses-other"), {
      stopped: false,
      files_tracked: 0,
      claim_released: false,
    });
  });

  it("counts only the files of the work span being stopped", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    await track(p, "old.ts");
    await stopWork(p, task.id);
    p.clock.advance(1000);
    await startWork(p, task.id);
    await track(p, "new.ts");
    assert.equal((await stopWork(p, task.id)).files_tracked, 1);
  });

  it("refuses an unknown task (TASK_NOT_FOUND)", async () => {
    await expectCallError(project(), "arbeit_task_stop_work", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND");
  });
});

describe("file tracking (service.trackFile)", () => {
  const project = useProject();

  it("records nothing while the session has no active work", async () => {
    const p = project();
    const task = await createTask(p, "t");
    assert.deepEqual(await track(p, "src/a.ts"), {
      tracked: false,
      reason: "no_active_work",
      file_path: "src/a.ts",
    });
    assert.deepEqual(await trackedPaths(p, task.id), []);
  });

  it("records a file against the task the session works on, relative to the project root", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    assert.deepEqual(await track(p, join(p.dir, "src", "a.ts"), "read"), {
      tracked: true,
      task_id: task.id,
      file_path: "src/a.ts",
      operation: "read",
    });
    assert.deepEqual(await trackedPaths(p, task.id), ["src/a.ts"]);
  });

  it("normalises relative paths with . and .. segments", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    assert.equal((await track(p, "./src/../lib/./b.ts")).file_path, "lib/b.ts");
  });

  it("ignores paths outside the project root", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    for (const path of ["/etc/passwd", "../elsewhere.ts", join(p.dir, "..", "sibling", "x.ts"), p.dir]) {
      assert.deepEqual(await track(p, path), { tracked: false, reason: "outside_project" }, path);
    }
    assert.deepEqual(await trackedPaths(p, task.id), []);
  });

  it("ignores Arbeit's own files under .arbeit/", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    for (const path of [".arbeit/arbeit.db", join(p.dir, ".arbeit", "arbeit.db-wal"), ".arbeit"]) {
      assert.equal((await track(p, path)).reason, "arbeit_data", path);
    }
    assert.equal((await track(p, ".arbeitrc")).tracked, true, "a sibling with a similar name is project work");
    assert.deepEqual(await trackedPaths(p, task.id), [".arbeitrc"]);
  });

  it("records the same path, operation and session once", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    await track(p, "src/a.ts");
    assert.equal((await track(p, join(p.dir, "src/a.ts"))).reason, "already_tracked");
    const files = (await query(p, "files_for_task", { task_id: task.id })).files;
    assert.deepEqual(files, [{ file_path: "src/a.ts", operations: ["write"], sessions: 1, last_at: files[0].last_at }]);
  });

  it("keeps reads and writes, and different sessions, apart", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id, "ses-one");
    await track(p, "a.ts", "read", "ses-one");
    await track(p, "a.ts", "write", "ses-one");
    await stopWork(p, task.id, "ses-one");
    await startWork(p, task.id, "ses-two");
    await track(p, "a.ts", "write", "ses-two");
    const rows = p.store.driver.prepare("SELECT COUNT(*) AS n FROM file_associations").get<{ n: number }>();
    assert.equal(Number(rows?.n), 3);
    const [file] = (await query(p, "files_for_task", { task_id: task.id })).files;
    assert.deepEqual([file.operations, file.sessions], [["read", "write"], 2]);
  });

  it("stops recording once work stops", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await startWork(p, task.id);
    await stopWork(p, task.id);
    assert.equal((await track(p, "a.ts")).reason, "no_active_work");
  });
});
