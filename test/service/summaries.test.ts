import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTask, FILLED, getTask, query, relateOk, useProject } from "./helpers.js";

/**
 * What a listing says about each task: what an agent needs to choose and act, and nothing that is
 * null, empty or at its default. One task in full is arbeit_task_get's answer, or `full: true`.
 */

describe("a task in a listing", () => {
  const project = useProject();

  it("is its id, title and status when nothing else is set", async () => {
    const p = project();
    const task = await createTask(p, "Write the release notes");
    assert.deepEqual((await query(p, "tasks")).tasks, [
      { id: task.id, title: "Write the release notes", status: "open" },
    ]);
  });

  it("adds the type, a priority other than 2, the parent, the owner and the active form when set", async () => {
    const p = project();
    const epic = await createTask(p, "Epic", { type: "epic", ...FILLED });
    const child = await createTask(p, "Child", {
      type: "bug",
      ...FILLED,
      priority: 0,
      parent_id: epic.id,
      owner: "alice",
      active_form: "Fixing it",
    });
    const [summary] = (await query(p, "tasks", { parent_id: epic.id })).tasks;
    assert.deepEqual(summary, {
      id: child.id,
      title: "Child",
      status: "open",
      type: "bug",
      priority: 0,
      parent_id: epic.id,
      owner: "alice",
      active_form: "Fixing it",
    });
  });

  it("says blocked and by whom while a blocker is unfinished, and nothing once all are finished", async () => {
    const p = project();
    const first = await createTask(p, "First");
    const second = await createTask(p, "Second");
    await relateOk(p, "add", first.id, "blocks", second.id);
    const blocked = (await query(p, "tasks", { status: "open" })).tasks.find((t: any) => t.id === second.id);
    assert.equal(blocked.blocked, true);
    assert.deepEqual(blocked.blocked_by, [first.id]);
    await p.ok("arbeit_task_update", { task_id: first.id, status: "completed" });
    const freed = (await query(p, "tasks")).tasks.find((t: any) => t.id === second.id);
    assert.equal("blocked" in freed, false);
    assert.equal("blocked_by" in freed, false);
  });

  it("names its list only when it is not the default list", async () => {
    const p = project();
    await createTask(p, "Elsewhere", { list_id: "team-a" });
    await createTask(p, "Here");
    const tasks = (await query(p, "tasks")).tasks;
    assert.equal(tasks.find((t: any) => t.title === "Elsewhere").list_id, "team-a");
    assert.equal("list_id" in tasks.find((t: any) => t.title === "Here"), false);
  });

  it("carries the claim while one is held", async () => {
    const p = project();
    const task = await createTask(p, "Claimed");
    const claimed = (await p.ok("arbeit_task_claim", { task_id: task.id })).task;
    const [summary] = (await query(p, "tasks")).tasks;
    assert.equal(summary.owner, claimed.owner);
    assert.equal(summary.lease_expires_at, claimed.lease_expires_at);
    assert.equal(summary.claim_session, claimed.claim_session);
  });

  it("leaves out version and timestamps unless fields asks for them", async () => {
    const p = project();
    const task = await createTask(p, "Timed");
    const [plain] = (await query(p, "tasks")).tasks;
    for (const key of ["version", "created_at", "updated_at"]) assert.equal(key in plain, false, key);
    const [timed] = (await query(p, "tasks", { fields: ["version", "updated_at", "type"] })).tasks;
    assert.equal(timed.version, 1);
    assert.equal(timed.updated_at, task.updated_at);
    assert.equal(timed.type, null, "a field asked for is shown even when null");
  });

  it("refuses a field name that a task does not have (INVALID_ARGUMENT)", async () => {
    const envelope = await project().call("arbeit_query", { query: "tasks", params: { fields: ["colour"] } });
    assert.equal(envelope.success, false);
    assert.equal((envelope as any).error.code, "INVALID_ARGUMENT");
  });

  it("is the whole task with full: true", async () => {
    const p = project();
    const task = await createTask(p, "Whole", { type: "feature", ...FILLED });
    assert.deepEqual((await query(p, "tasks", { full: true })).tasks, [await getTask(p, task.id)]);
  });

  it("has no status in ready's answer, where every task is open", async () => {
    const p = project();
    const task = await createTask(p, "Ready one", { type: "chore" });
    assert.deepEqual((await query(p, "ready")).tasks, [{ id: task.id, title: "Ready one", type: "chore" }]);
  });
});

describe("arbeit_task_get", () => {
  const project = useProject();

  it("keeps the whole task, nulls, version and timestamps included", async () => {
    const p = project();
    const task = await createTask(p, "Whole");
    const got = await getTask(p, task.id);
    for (const key of ["list_id", "type", "intent", "parent_id", "owner", "version", "created_at", "updated_at"])
      assert.ok(key in got, key);
  });
});
