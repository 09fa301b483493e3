import assert from "node:assert/strict";
import { it } from "node:test";
import { alice, bob, ids, type StoreFactory, suite, useStore } from "./harness.js";

const MINUTE = 60_000;

/** ready / next ordering and claims with leases, expiring by the injected clock. */
export function readyClaimsContract(factory: StoreFactory): void {
  suite("ready and next", () => {
    const p = useStore(factory);

    it("lists open, unblocked, unclaimed, live tasks by priority, age, id", async () => {
      const late = await p().task("late", { priority: 1 });
      p().clock.advance(1000);
      const urgent = await p().task("urgent", { priority: 0 });
      p().clock.advance(1000);
      const blocker = await p().task("blocker", { priority: 1 });
      await p().task("blocked", { priority: 0, blocked_by: [blocker] });
      await p().task("started", { status: "in_progress" });
      await p().task("done", { status: "completed" });
      const gone = await p().task("gone", { priority: 0 });
      await p().ok("arbeit_task_delete", { task_id: gone });
      const claimed = await p().task("claimed", { priority: 0 });
      await p().ok("arbeit_task_claim", { task_id: claimed }, bob);
      await p().task("elsewhere", { priority: 0, list_id: "other" });

      const ready = await p().ok("arbeit_query", { query: "ready", params: { list_id: "default" } });
      assert.deepEqual(ids(ready.tasks), [urgent, late, blocker]);
      const next = await p().ok("arbeit_query", { query: "next", params: { list_id: "default" } });
      assert.equal(next.task.id, urgent);
      assert.equal(typeof next.why, "string");
      const first = await p().ok("arbeit_query", { query: "ready", params: { list_id: "default", limit: 1 } });
      const page = await p().ok("arbeit_query", {
        query: "ready",
        params: { list_id: "default", limit: 1, cursor: first.next_cursor },
      });
      assert.deepEqual(ids(page.tasks), [late]);
      assert.equal(page.has_more, true);
      const direct = await p().read((tx) =>
        tx.readyTasks({ list_id: "default", now: p().clock.now().toISOString(), agent: null, limit: 10, offset: 0 }),
      );
      assert.deepEqual(ids(direct), [urgent, late, blocker]);
    });

    it("ready and next filter by metadata as the tasks query does, a label in a list included", async () => {
      const bug = await p().task("ui bug", { priority: 1, metadata: { labels: ["ui", "bug"], team: "web" } });
      const best = await p().task("api first", { priority: 0, metadata: { labels: ["api"], team: "web" } });
      p().clock.advance(1000);
      const plain = await p().task("no metadata", { priority: 0 });
      const ready = async (metadata: unknown) =>
        ids((await p().ok("arbeit_query", { query: "ready", params: { metadata } })).tasks);
      assert.deepEqual(await ready({ labels: "ui" }), [bug]);
      assert.deepEqual(await ready({ team: "web" }), [best, bug]);
      assert.deepEqual(await ready({ team: "web", labels: "bug" }), [bug]);
      assert.deepEqual(await ready({}), [best, plain, bug]);
      const next = async (metadata: unknown) =>
        (await p().ok("arbeit_query", { query: "next", params: { metadata } })).task?.id ?? null;
      assert.equal(await next({ labels: "ui" }), bug);
      assert.equal(await next({ labels: "docs" }), null);
      assert.equal(await next({ team: "web" }), best);
      // A page's cursor is the filter's: it reads on within the same filter.
      const first = await p().ok("arbeit_query", { query: "ready", params: { metadata: { team: "web" }, limit: 1 } });
      const after = await p().ok("arbeit_query", {
        query: "ready",
        params: { metadata: { team: "web" }, limit: 1, cursor: first.next_cursor },
      });
      assert.deepEqual(ids(after.tasks), [bug]);
      assert.equal(
        (await p().fail("arbeit_query", { query: "next", params: { metadata: { labels: ["ui"] } } })).code,
        "INVALID_METADATA",
      );
    });

    it("explains why a task is not ready", async () => {
      const blocker = await p().task("blocker");
      const blocked = await p().task("blocked", { blocked_by: [blocker] });
      const why = await p().ok("arbeit_query", { query: "ready", params: { task_id: blocked } });
      assert.equal(why.ready, false);
      assert.ok(why.reasons.some((r: string) => r.includes(blocker)));
      const explained = await p().ok("arbeit_query", { query: "ready", params: { explain: true } });
      assert.deepEqual(
        explained.not_ready.map((n: { id: string }) => n.id),
        [blocked],
      );
    });

    it("leaves a parent out while any child is unfinished: its work is its children", async () => {
      const epic = await p().task("epic", { priority: 0 });
      const first = await p().task("first child", { parent_id: epic, priority: 1 });
      const second = await p().task("second child", { parent_id: epic, priority: 2 });
      const ready = async () => ids((await p().ok("arbeit_query", { query: "ready" })).tasks);
      assert.deepEqual(await ready(), [first, second]);
      const why = await p().ok("arbeit_query", { query: "ready", params: { task_id: epic } });
      assert.equal(why.ready, false);
      assert.ok(why.reasons.some((r: string) => r.includes("unfinished children") && r.includes(first)));
      await p().ok("arbeit_task_update", { task_id: first, status: "completed" });
      await p().ok("arbeit_task_update", { task_id: second, status: "cancelled" });
      assert.deepEqual(await ready(), [epic]);
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, bob)).task.id, epic);
    });

    it("follows a blocker as it finishes, reopens, is deleted, loses and regains its edge, and becomes a hub and stops being one", async () => {
      const other = await p().task("other", { priority: 1 });
      const first = await p().task("first blocker", { priority: 2 });
      const target = await p().task("target", { priority: 0, blocked_by: [first] });
      const head = async (): Promise<string[]> =>
        ids((await p().ok("arbeit_query", { query: "ready", params: { limit: 3 } })).tasks);
      const status = (task_id: string, status: string) => p().ok("arbeit_task_update", { task_id, status });
      const edge = (action: "add" | "remove", from: string, to: string) =>
        p().ok("arbeit_relationship", { action, from_task_id: from, to_task_id: to, type: "blocks" });

      assert.deepEqual(await head(), [other, first]);
      await status(first, "completed");
      assert.deepEqual(await head(), [target, other]);
      await status(first, "open");
      assert.deepEqual(await head(), [other, first]);
      await status(first, "in_progress");
      assert.deepEqual(await head(), [other]);
      await p().ok("arbeit_task_delete", { task_id: first });
      assert.deepEqual(await head(), [target, other]);

      const second = await p().task("second blocker", { priority: 2 });
      await edge("add", second, target);
      assert.deepEqual(await head(), [other, second]);
      await edge("remove", second, target);
      assert.deepEqual(await head(), [target, other, second]);
      await edge("add", second, target);
      assert.deepEqual(await head(), [other, second]);

      // Over 100 tasks blocked by it, the second blocker is a hub; the target has a blocker
      // that is no hub as well, so finishing the hub alone does not make it ready.
      const third = await p().task("third blocker", { priority: 3 });
      await edge("add", third, target);
      const dependants: string[] = [];
      for (let i = 0; i < 100; i++) {
        p().clock.advance(1);
        dependants.push(await p().task(`dependant ${i}`, { priority: 4, blocked_by: [second] }));
      }
      assert.deepEqual(await head(), [other, second, third]);
      await status(second, "completed");
      assert.deepEqual(await head(), [other, third, dependants[0]!]);
      await status(third, "completed");
      assert.deepEqual(await head(), [target, other, dependants[0]!]);
      await status(third, "open");
      await status(second, "open");
      assert.deepEqual(await head(), [other, second, third]);

      // Back to 100 edges: no hub, and its edges carry its state again.
      await edge("remove", second, dependants[99]!);
      assert.deepEqual(await head(), [other, second, third]);
      await status(third, "cancelled");
      await status(second, "completed");
      assert.deepEqual(await head(), [target, other, dependants[0]!]);
      await status(second, "open");
      assert.deepEqual(await head(), [other, second, dependants[99]!]);
      await p().ok("arbeit_task_delete", { task_id: second });
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, bob)).task.id, target);
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, bob)).task.id, other);
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, bob)).task.id, dependants[0]);
    });

    it("says so when nothing is ready", async () => {
      const next = await p().ok("arbeit_query", { query: "next" });
      assert.equal(next.task, null);
    });
  });

  suite("claims", () => {
    const p = useStore(factory);

    it("claims a named task with a lease and refuses a second agent with ALREADY_CLAIMED", async () => {
      const id = await p().task("work");
      const claim = await p().ok("arbeit_task_claim", { task_id: id }, alice);
      assert.equal(claim.claimed, true);
      assert.equal(claim.renewed, false);
      assert.equal(claim.task.owner, "alice");
      assert.equal(claim.lease_expires_at, "2026-01-01T00:15:00.000Z");
      assert.equal(claim.task.version, 2);
      const denied = await p().fail("arbeit_task_claim", { task_id: id }, bob);
      assert.equal(denied.code, "ALREADY_CLAIMED");
      assert.equal(denied.details.owner, "alice");
      assert.equal(denied.details.lease_expires_at, "2026-01-01T00:15:00.000Z");
    });

    it("claims the best ready task with next: true until none is left", async () => {
      const low = await p().task("low", { priority: 3 });
      const high = await p().task("high", { priority: 0 });
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, alice)).task.id, high);
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, bob)).task.id, low);
      const none = await p().ok("arbeit_task_claim", { next: true }, bob);
      assert.deepEqual([none.claimed, none.task], [false, null]);
    });

    it("claim next and ready pass over a task sharing files with another session's work, to the next one", async () => {
      const held = await p().task("held", { priority: 0 });
      await p().ok("arbeit_task_claim", { task_id: held }, alice);
      // Files stored for the held task (a reservation made for it), and paths a plan names.
      await p().ok("arbeit_task_claim", { task_id: held, paths: ["src/auth/**"] }, alice);
      const sharing = await p().task("sharing", { priority: 1, plan: "Touches src/auth/session.ts" });
      const free = await p().task("free", { priority: 2, plan: "Only docs/guide.md" });
      const ready = await p().ok("arbeit_query", { query: "ready" }, bob);
      assert.deepEqual(ids(ready.tasks), [free]);
      assert.deepEqual(ready.kept_apart, [
        { task_id: sharing, with_task: held, held_by: "alice", files: ["src/auth/session.ts"] },
      ]);
      // The best ready task is kept apart: the claim goes on to the one after it.
      assert.equal((await p().ok("arbeit_task_claim", { next: true }, bob)).task.id, free);
    });

    it("frees an expired lease back to the pool and records claim_expired", async () => {
      const id = await p().task("work");
      await p().ok("arbeit_task_claim", { task_id: id, lease_seconds: 60 }, alice);
      assert.deepEqual((await p().ok("arbeit_query", { query: "ready" }, bob)).tasks, []);
      // The holder still sees its own claim as work it may do.
      assert.deepEqual(ids((await p().ok("arbeit_query", { query: "ready" }, alice)).tasks), [id]);
      const now = () => p().clock.now().toISOString();
      assert.deepEqual(await p().read((tx) => tx.expiredClaims(now())), []);
      p().clock.advance(60_000);
      const expired = await p().read((tx) => tx.expiredClaims(now()));
      assert.deepEqual(expired, [
        { id, owner: "alice", claim_session: "ses-alice", lease_expires_at: "2026-01-01T00:01:00.000Z" },
      ]);
      assert.deepEqual(ids((await p().ok("arbeit_query", { query: "ready" }, bob)).tasks), [id]);
      const taken = await p().ok("arbeit_task_claim", { next: true }, bob);
      assert.equal(taken.task.id, id);
      assert.equal(taken.task.owner, "bob");
      const events = await p().ok("arbeit_query", { query: "events", params: { event_types: ["claim_expired"] } });
      assert.equal(events.events.length, 1);
      assert.equal(events.events[0].payload.owner, "alice");
    });

    it("reads an agent's assignments no session holds, best first: unleased or lapsed, never held, finished or another's", async () => {
      const unleased = await p().task("unleased", { priority: 2, owner: "alice" });
      const lapsed = await p().task("lapsed", { priority: 1 });
      p().clock.advance(1000);
      const later = await p().task("later", { priority: 1, owner: "alice" });
      const held = await p().task("held", { priority: 0 });
      await p().task("bob's", { priority: 0, owner: "bob" });
      const done = await p().task("done", { priority: 0, owner: "alice" });
      await p().ok("arbeit_task_update", { task_id: done, status: "completed" }, alice);
      await p().ok("arbeit_task_claim", { task_id: lapsed, lease_seconds: 60 }, alice);
      await p().ok("arbeit_task_claim", { task_id: held }, { session: "ses-alice-2", agent: "alice" });
      // A lease that ends at this very moment holds nothing.
      p().clock.advance(60_000);
      const now = p().clock.now().toISOString();
      assert.deepEqual(ids(await p().read((tx) => tx.assignedTo("alice", now, 10))), [lapsed, later, unleased]);
      assert.deepEqual(ids(await p().read((tx) => tx.assignedTo("alice", now, 2))), [lapsed, later]);
      assert.deepEqual(await p().read((tx) => tx.assignedTo("carol", now, 10)), []);
    });

    it("renews from now, releases only the caller's own claim", async () => {
      const id = await p().task("work");
      await p().ok("arbeit_task_claim", { task_id: id }, alice);
      p().clock.advance(10 * MINUTE);
      const renewed = await p().ok("arbeit_task_claim", { action: "renew", task_id: id }, alice);
      assert.equal(renewed.renewed, true);
      assert.equal(renewed.lease_expires_at, "2026-01-01T00:25:00.000Z");
      assert.equal(
        (await p().fail("arbeit_task_claim", { action: "release", task_id: id }, bob)).code,
        "ALREADY_CLAIMED",
      );
      const released = await p().ok("arbeit_task_claim", { action: "release", task_id: id }, alice);
      assert.equal(released.released, true);
      assert.equal(released.task.owner, null);
      assert.equal(released.task.lease_expires_at, null);
      assert.equal((await p().ok("arbeit_task_claim", { action: "release", task_id: id }, alice)).released, false);
    });

    it("lists a session's live claims, most recently claimed first", async () => {
      const first = await p().task("first");
      const second = await p().task("second");
      const theirs = await p().task("theirs");
      await p().ok("arbeit_task_claim", { task_id: first, lease_seconds: 600 }, alice);
      p().clock.advance(1000);
      await p().ok("arbeit_task_claim", { task_id: second, lease_seconds: 60 }, alice);
      await p().ok("arbeit_task_claim", { task_id: theirs }, bob);
      const now = () => p().clock.now().toISOString();
      assert.deepEqual(ids(await p().read((tx) => tx.claimsOf("ses-alice", now()))), [second, first]);
      p().clock.advance(60_000);
      assert.deepEqual(ids(await p().read((tx) => tx.claimsOf("ses-alice", now()))), [first]);
    });

    it("refuses finished tasks and stale versions; a caller without an agent claims as its session", async () => {
      const done = await p().task("done", { status: "completed" });
      assert.equal((await p().fail("arbeit_task_claim", { task_id: done }, alice)).code, "INVALID_STATUS");
      const open = await p().task("open");
      const stale = await p().fail("arbeit_task_claim", { task_id: open, expected_version: 7 }, alice);
      assert.equal(stale.code, "VERSION_CONFLICT");
      assert.equal(stale.details.current_version, 1);
      const anonymous = await p().ok("arbeit_task_claim", { task_id: open }, { agent: null });
      assert.equal(anonymous.task.owner, "ses-alice");
      assert.equal(anonymous.task.claim_session, "ses-alice");
    });

    it("claims for whoever starts work, and refuses work on another's claim", async () => {
      const id = await p().task("work");
      const started = await p().ok("arbeit_task_start_work", { task_id: id }, alice);
      assert.equal(started.task.owner, "alice");
      assert.equal(started.task.status, "in_progress");
      const other = await p().task("other");
      await p().ok("arbeit_task_claim", { task_id: other }, alice);
      assert.equal((await p().fail("arbeit_task_start_work", { task_id: other }, bob)).code, "ALREADY_CLAIMED");
    });
  });
}
