import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { alice, bob, callAny, ENGINES, type EngineProject, onEngine, openEngineProject, task } from "./helpers.js";

const MINUTE = 60_000;

for (const engine of ENGINES)
  describe(`claims with leases on ${engine}`, await onEngine(engine), () => {
    let project: EngineProject;
    beforeEach(async () => {
      project = await openEngineProject(engine);
    });
    afterEach(() => project.close());

    const events = async (type: string) =>
      (await project.rows("SELECT * FROM events WHERE event_type = ? ORDER BY seq", type)) as Array<{
        payload: string;
        task_id: string;
      }>;

    it("claims a named task for 15 minutes by default", async () => {
      const id = await task(project, "Work");
      const result = await project.ok("arbeit_task_claim", { task_id: id }, alice);
      assert.equal(result.claimed, true);
      assert.equal(result.task.owner, "alice");
      assert.equal(result.lease_expires_at, "2026-01-01T00:15:00.000Z");
      assert.equal((await events("task_claimed")).length, 1);
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
      const expired = await events("claim_expired");
      assert.equal(expired.length, 1);
      assert.equal(JSON.parse(expired[0]!.payload).owner, "alice");
    });

    it("takes a task whose lease ran out with next: true, recording the expiry first", async () => {
      const low = await task(project, "Low", { priority: 3 });
      const high = await task(project, "High", { priority: 0 });
      await project.ok("arbeit_task_claim", { task_id: high, lease_seconds: 60 }, alice);
      assert.equal((await project.ok("arbeit_task_claim", { next: true }, bob)).task.id, low);
      project.clock.advance(61_000);
      const taken = await project.ok("arbeit_task_claim", { next: true }, { agent: "carol", session: "ses-carol" });
      assert.equal(taken.task.id, high);
      assert.equal(taken.task.owner, "carol");
      assert.deepEqual(
        (await events("claim_expired")).map((event) => event.task_id),
        [high],
      );
    });

    it("renews a lease from now and keeps the claim", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_claim", { task_id: id }, alice);
      project.clock.advance(10 * MINUTE);
      const renewed = await project.ok("arbeit_task_claim", { action: "renew", task_id: id }, alice);
      assert.equal(renewed.lease_expires_at, "2026-01-01T00:25:00.000Z");
      assert.equal(renewed.renewed, true);
      assert.equal((await events("claim_renewed")).length, 1);
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
      assert.equal((await events("claim_released")).length, 1);
    });

    it("refuses to claim finished tasks and stale versions; a caller without an agent claims as its session", async () => {
      const done = await task(project, "Done", { status: "completed" });
      assert.equal(
        (await callAny(project, "arbeit_task_claim", { task_id: done }, alice)).error.code,
        "INVALID_STATUS",
      );
      const open = await task(project, "Open");
      const stale = await callAny(project, "arbeit_task_claim", { task_id: open, expected_version: 7 }, alice);
      assert.equal(stale.error.code, "VERSION_CONFLICT");
      assert.equal(stale.error.details.current_version, 1);
      const anonymous = await project.ok("arbeit_task_claim", { task_id: open }, { agent: null, session: "ses-x" });
      assert.equal(anonymous.task.owner, "ses-x");
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

    it("keeps two sessions of one agent apart: one holds the claim, the other is refused", async () => {
      const id = await task(project, "Work");
      const one = { agent: "claude-code", session: "conversation-1" };
      const two = { agent: "claude-code", session: "conversation-2" };
      await project.ok("arbeit_task_claim", { task_id: id }, one);
      for (const [tool, args] of [
        ["arbeit_task_claim", { task_id: id }],
        ["arbeit_task_start_work", { task_id: id }],
        ["arbeit_task_claim", { action: "release", task_id: id }],
        ["arbeit_task_update", { task_id: id, owner: "someone-else" }],
        ["arbeit_task_update", { task_id: id, owner: null }],
      ] as const) {
        const denied = await callAny(project, tool, args, two);
        assert.equal(denied.error?.code, "ALREADY_CLAIMED", `${tool} ${JSON.stringify(args)}`);
        assert.equal(denied.error.details.owner, "claude-code");
        assert.equal(denied.error.details.lease_expires_at, "2026-01-01T00:15:00.000Z");
      }
      assert.equal((await project.ok("arbeit_task_get", { task_id: id })).task.claim_session, "conversation-1");
    });

    it("refuses takeover through update of owner; the holder may hand the task on as an assignment", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_start_work", { task_id: id }, alice);
      const denied = await callAny(project, "arbeit_task_update", { task_id: id, owner: "bob" }, bob);
      assert.equal(denied.error.code, "ALREADY_CLAIMED");
      const handed = await project.ok("arbeit_task_update", { task_id: id, owner: "bob" }, alice);
      assert.equal(handed.task.owner, "bob");
      assert.equal(handed.task.lease_expires_at, null);
      assert.equal(handed.task.claim_session, null);
      // An assignment is no claim: bob's session may start it.
      assert.equal((await project.ok("arbeit_task_start_work", { task_id: id }, bob)).task.owner, "bob");
    });

    it("ends the lease with owner: null from the holder, leaving no lease behind", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_claim", { task_id: id }, alice);
      const cleared = await project.ok("arbeit_task_update", { task_id: id, owner: null }, alice);
      assert.deepEqual(
        [cleared.task.owner, cleared.task.lease_expires_at, cleared.task.claim_session],
        [null, null, null],
      );
      const [row] = await project.rows("SELECT lease_expires_at, claim_session FROM tasks WHERE id = ?", id);
      assert.deepEqual({ ...row }, { lease_expires_at: null, claim_session: null });
    });

    it("lets a person break a live claim with force, recorded in the event log", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_start_work", { task_id: id }, alice);
      const person = { agent: "oncall", session: "terminal" };
      const refused = await callAny(project, "arbeit_task_claim", { action: "release", task_id: id }, person);
      assert.equal(refused.error.code, "ALREADY_CLAIMED");
      // The advice never tells the caller to force (agents follow it literally); a person knows to.
      assert.match(refused.error.suggestions.join(" "), /a person's decision/);
      // The refusal never proposes breaking the claim: that is a person's deliberate step.
      assert.doesNotMatch(refused.error.suggestions.join(" "), /force/);
      const forced = await project.ok("arbeit_task_claim", { action: "release", task_id: id, force: true }, person);
      assert.deepEqual([forced.released, forced.forced, forced.task.owner], [true, true, null]);
      const [event] = await events("claim_released");
      assert.deepEqual(JSON.parse(event!.payload), {
        owner: "alice",
        reason: "forced",
        session: "ses-alice",
        lease_expires_at: "2026-01-01T00:15:00.000Z",
      });
      const [row] = await project.rows("SELECT agent, session_id FROM events WHERE event_type = 'claim_released'");
      assert.deepEqual({ ...row }, { agent: "oncall", session_id: "terminal" });
      // The task is free: another session may start it; alice's session is refused no longer.
      assert.equal((await project.ok("arbeit_task_start_work", { task_id: id }, bob)).task.owner, "bob");
      assert.equal(
        (await callAny(project, "arbeit_task_start_work", { task_id: id }, alice)).error.code,
        "ALREADY_CLAIMED",
      );
      assert.equal(
        (await callAny(project, "arbeit_task_claim", { action: "renew", task_id: id, force: true }, bob)).error.code,
        "INVALID_ARGUMENT",
      );
    });

    it("frees every session working on a task when it is completed or cancelled", async () => {
      for (const status of ["completed", "cancelled"] as const) {
        const id = await task(project, `Work to be ${status}`);
        const next = await task(project, `Next after ${status}`);
        await project.ok("arbeit_task_start_work", { task_id: id }, alice);
        const done = await project.ok("arbeit_task_update", { task_id: id, status }, alice);
        assert.deepEqual([done.task.owner, done.task.lease_expires_at, done.task.claim_session], [null, null, null]);
        // The session is free at once: no ALREADY_WORKING, no claim left behind.
        await project.ok("arbeit_task_start_work", { task_id: next }, alice);
        const stopped = (await events("work_stopped")).map((e) => JSON.parse(e.payload));
        assert.equal(stopped.at(-1).reason, `task ${status}`);
        await project.ok("arbeit_task_stop_work", { task_id: next }, alice);
      }
    });

    it("renews the holder's lease with its activity on the task, without a new version", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_start_work", { task_id: id }, alice);
      project.clock.advance(10 * MINUTE);
      const before = (await project.ok("arbeit_task_get", { task_id: id })).task;
      await project.ok("arbeit_context_add", { task_id: id, type: "note", content: "still here" }, alice);
      const after = (await project.ok("arbeit_task_get", { task_id: id })).task;
      assert.equal(after.lease_expires_at, "2026-01-01T00:25:00.000Z");
      assert.equal(after.version, before.version);
      // A file the session touches renews it too, as does a repeat touch that records nothing new.
      project.clock.advance(10 * MINUTE);
      await project.service.trackFile({ path: `${project.dir}/a.ts`, operation: "write" }, alice);
      project.clock.advance(10 * MINUTE);
      const repeat = await project.service.trackFile({ path: `${project.dir}/a.ts`, operation: "write" }, alice);
      assert.equal(repeat.data.reason, "already_tracked");
      assert.equal(
        (await project.ok("arbeit_task_get", { task_id: id })).task.lease_expires_at,
        "2026-01-01T00:45:00.000Z",
      );
      // Someone else's activity renews nothing.
      project.clock.advance(10 * MINUTE);
      await project.ok("arbeit_context_add", { task_id: id, type: "note", content: "bob looks" }, bob);
      assert.equal(
        (await project.ok("arbeit_task_get", { task_id: id })).task.lease_expires_at,
        "2026-01-01T00:45:00.000Z",
      );
    });

    it("sends a renewal only for a task the acting session holds", async () => {
      const held = await task(project, "Held");
      const free = await task(project, "Free");
      await project.ok("arbeit_task_claim", { task_id: held }, alice);
      // The real store, with each renewal the service asks of a write transaction noted.
      const renewals: string[] = [];
      const noting: TaskStore = {
        ...project.store,
        read: (fn) => project.store.read(fn),
        close: () => project.store.close(),
        write: (fn) =>
          project.store.write((tx) =>
            fn(
              new Proxy(tx, {
                get(target, key) {
                  const value = Reflect.get(target, key, target);
                  if (key !== "renewLease" || typeof value !== "function") return value;
                  return (id: string, ...rest: unknown[]) => {
                    renewals.push(id);
                    return value.call(target, id, ...rest);
                  };
                },
              }),
            ),
          ),
      };
      const service = new ArbeitService(noting, { projectRoot: project.dir, now: project.clock.now });
      for (const id of [held, free]) {
        await service.updateTask({ task_id: id, description: "changed" }, alice);
        await service.addContext({ task_id: id, type: "note", content: "seen" }, alice);
        await service.addContext({ task_id: id, type: "note", content: "seen" }, bob);
      }
      assert.deepEqual(renewals, [held, held]);
    });

    it("never shortens a longer lease by renewing it", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_claim", { task_id: id, lease_seconds: 3600 }, alice);
      await project.ok("arbeit_context_add", { task_id: id, type: "note", content: "x" }, alice);
      assert.equal(
        (await project.ok("arbeit_task_get", { task_id: id })).task.lease_expires_at,
        "2026-01-01T01:00:00.000Z",
      );
    });
  });
