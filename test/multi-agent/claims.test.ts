import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { openTestProject, type TestProject } from "../helpers/service.js";
import { alice, bob, callAny, task } from "./helpers.js";

const MINUTE = 60_000;

describe("claims with leases", () => {
  let project: TestProject;
  beforeEach(async () => {
    project = await openTestProject();
  });
  afterEach(() => project.close());

  const events = (type: string) =>
    project.store.driver
      .prepare("SELECT * FROM events WHERE event_type = ? ORDER BY seq")
      .all<{ payload: string; task_id: string }>(type);

  it("claims a named task for 15 minutes by default", async () => {
    const id = await task(project, "Work");
    const result = await project.ok("arbeit_task_claim", { task_id: id }, alice);
    assert.equal(result.claimed, true);
    assert.equal(result.task.owner, "alice");
    assert.equal(result.lease_expires_at, "2026-01-01T00:15:00.000Z");
    assert.equal(events("task_claimed").length, 1);
  });

  it("refuses a second agent with ALREADY_CLAIMED naming the owner and expiry", async () => {
    const id = await task(project, "Work");
    await project.ok("arbeit_task_claim", { task_id: id }, alice);
    const denied = await callAny(project, "arbeit_task_claim", { task_id: id }, bob);
    assert.equal(denied.error.code, "ALREADY_CLAIMED");
    assert.equal(denied.error.details.owner, "alice");
    assert.equal(denied.error.details.lease_expires_at, "2026-01-01T00:15:00.000Z");
    assert.match(denied.error.message, /alice/);
  });

  it("claims the best ready task with next: true, and says when nothing is ready", async () => {
    const low = await task(project, "Low", { priority: 3 });
    const high = await task(project, "High", { priority: 0 });
    assert.equal((await project.ok("arbeit_task_claim", { next: true }, alice)).task.id, high);
    assert.equal((await project.ok("arbeit_task_claim", { next: true }, bob)).task.id, low);
    const none = await project.ok("arbeit_task_claim", { next: true }, bob);
    assert.equal(none.claimed, false);
    assert.equal(none.task, null);
  });

  it("keeps claimed tasks out of ready until the lease expires, then records the expiry", async () => {
    const id = await task(project, "Work");
    await project.ok("arbeit_task_claim", { task_id: id, lease_seconds: 60 }, alice);
    assert.deepEqual((await project.ok("arbeit_query", { query: "ready" })).tasks, []);
    project.clock.advance(61_000);
    assert.equal((await project.ok("arbeit_query", { query: "ready" })).tasks[0].id, id);
    const taken = await project.ok("arbeit_task_claim", { task_id: id }, bob);
    assert.equal(taken.task.owner, "bob");
    const expired = events("claim_expired");
    assert.equal(expired.length, 1);
    assert.equal(JSON.parse(expired[0]!.payload).owner, "alice");
  });

  it("renews a lease from now and keeps the claim", async () => {
    const id = await task(project, "Work");
    await project.ok("arbeit_task_claim", { task_id: id }, alice);
    project.clock.advance(10 * MINUTE);
    const renewed = await project.ok("arbeit_task_claim", { action: "renew", task_id: id }, alice);
    assert.equal(renewed.lease_expires_at, "2026-01-01T00:25:00.000Z");
    assert.equal(renewed.renewed, true);
    assert.equal(events("claim_renewed").length, 1);
  });

  it("releases only the caller's own claim", async () => {
    const id = await task(project, "Work");
    await project.ok("arbeit_task_claim", { task_id: id }, alice);
    assert.equal(
      (await callAny(project, "arbeit_task_claim", { action: "release", task_id: id }, bob)).error.code,
      "ALREADY_CLAIMED",
    );
    const released = await project.ok("arbeit_task_claim", { action: "release", task_id: id }, alice);
    assert.equal(released.released, true);
    assert.equal(released.task.owner, null);
    assert.equal((await project.ok("arbeit_task_claim", { action: "release", task_id: id }, alice)).released, false);
  });

  it("claims the task for whoever starts work on it, and refuses work on another's claim", async () => {
    const id = await task(project, "Work");
    const started = await project.ok("arbeit_task_start_work", { task_id: id }, alice);
    assert.equal(started.task.owner, "alice");
    assert.equal(started.task.status, "in_progress");
    const other = await task(project, "Other");
    await project.ok("arbeit_task_claim", { task_id: other }, alice);
    assert.equal(
      (await callAny(project, "arbeit_task_start_work", { task_id: other }, bob)).error.code,
      "ALREADY_CLAIMED",
    );
  });

  it("hands the task back when its worker stops work, so another agent can take it at once", async () => {
    const id = await task(project, "Work");
    await project.ok("arbeit_task_start_work", { task_id: id }, alice);
    const stopped = await project.ok("arbeit_task_stop_work", { task_id: id }, alice);
    assert.equal(stopped.claim_released, true);
    const taken = await project.ok("arbeit_task_start_work", { task_id: id }, bob);
    assert.equal(taken.task.owner, "bob");
    assert.equal(events("claim_released").length, 1);
  });

  it("refuses to claim finished tasks, stale versions and callers without an agent", async () => {
    const done = await task(project, "Done", { status: "completed" });
    assert.equal((await callAny(project, "arbeit_task_claim", { task_id: done }, alice)).error.code, "INVALID_STATUS");
    const open = await task(project, "Open");
    const stale = await callAny(project, "arbeit_task_claim", { task_id: open, expected_version: 7 }, alice);
    assert.equal(stale.error.code, "VERSION_CONFLICT");
    assert.equal(stale.error.details.current_version, 1);
    assert.equal(
      (await callAny(project, "arbeit_task_claim", { task_id: open }, { agent: null })).error.code,
      "INVALID_ARGUMENT",
    );
  });

  it("needs exactly one of task_id and next", async () => {
    const id = await task(project, "Work");
    assert.equal((await callAny(project, "arbeit_task_claim", {}, alice)).error.code, "INVALID_ARGUMENT");
    assert.equal(
      (await callAny(project, "arbeit_task_claim", { task_id: id, next: true }, alice)).error.code,
      "INVALID_ARGUMENT",
    );
  });

  it("scopes next: true to a list", async () => {
    await task(project, "Elsewhere", { list_id: "other", priority: 0 });
    const mine = await task(project, "Here", { list_id: "team-a" });
    assert.equal((await project.ok("arbeit_task_claim", { next: true, list_id: "team-a" }, alice)).task.id, mine);
  });
});
