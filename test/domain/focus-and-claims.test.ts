import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { leaseState, leaseUntil } from "../../src/domain/claims.js";
import { selectFocus } from "../../src/domain/focus.js";
import { readinessReasons } from "../../src/domain/readiness.js";
import type { Task } from "../../src/domain/types.js";
import { taskFixture } from "../helpers/fixtures.js";

const task = (id: string, patch: Partial<Task> = {}): Task => taskFixture({ id, title: id, ...patch });

describe("focus selection, per session", () => {
  const now = "2026-01-01T00:00:00.000Z";
  const later = "2026-01-01T01:00:00.000Z";
  const previous = task("prev", { status: "in_progress" });
  const started = task("started", { status: "in_progress" });
  const claimed = task("claim", { owner: "me", claim_session: "s1", lease_expires_at: later });
  const assigned = task("assigned", { owner: "me" });
  const ready = task("ready");
  const theirs = (id: string) =>
    task(id, { status: "in_progress", owner: "other", claim_session: "s2", lease_expires_at: later });
  const none = { previous: undefined, working: undefined, lastStarted: undefined, claims: [], assigned: [], ready: [] };
  const all = {
    previous,
    working: previous,
    lastStarted: started,
    claims: [claimed],
    assigned: [assigned],
    ready: [ready],
  };
  const cases: Array<[string, Partial<Parameters<typeof selectFocus>[0]>, string | null, string]> = [
    ["keeps the focus while the session still works on it", all, "prev", "kept_focus"],
    [
      "drops a focus the session no longer works on, for the task start_work last moved it to",
      { ...all, working: started },
      "started",
      "last_started",
    ],
    [
      "drops a finished focus",
      { ...all, previous: task("prev", { status: "completed" }), working: undefined },
      "started",
      "last_started",
    ],
    [
      "never keeps a focus another session now holds",
      { ...all, previous: theirs("prev"), working: theirs("prev"), lastStarted: undefined },
      "claim",
      "claimed",
    ],
    [
      "passes over a last-started task another session holds",
      { ...none, lastStarted: theirs("started"), claims: [claimed] },
      "claim",
      "claimed",
    ],
    ["then the session's most recent live claim", { ...none, claims: [claimed, task("older")] }, "claim", "claimed"],
    [
      "skips finished claims",
      { ...none, claims: [task("done", { status: "completed" })], ready: [ready] },
      "ready",
      "best_ready",
    ],
    ["then a task assigned to the agent", { ...none, assigned: [assigned], ready: [ready] }, "assigned", "assigned"],
    ["then the best ready task", { ...none, ready: [ready] }, "ready", "best_ready"],
    ["else nothing", none, null, "none"],
  ];
  for (const [name, candidates, id, reason] of cases) {
    it(name, () => {
      const focus = selectFocus({ ...none, ...candidates, session: "s1", now });
      assert.equal(focus.task?.id ?? null, id);
      assert.equal(focus.reason, reason);
    });
  }
});

describe("lease state", () => {
  const now = "2026-01-01T00:10:00.000Z";
  const cases: Array<[string, Pick<Task, "claim_session" | "lease_expires_at">, "free" | "mine" | "other"]> = [
    ["unclaimed is free", { claim_session: null, lease_expires_at: null }, "free"],
    ["a session without a lease holds nothing", { claim_session: "s2", lease_expires_at: null }, "free"],
    ["an expired lease is free", { claim_session: "s2", lease_expires_at: "2026-01-01T00:09:59.999Z" }, "free"],
    ["a lease ending now is over", { claim_session: "s2", lease_expires_at: now }, "free"],
    ["a live lease of this session", { claim_session: "s1", lease_expires_at: "2026-01-01T00:20:00.000Z" }, "mine"],
    [
      "a live lease of another session, even of the same agent",
      { claim_session: "s2", lease_expires_at: "2026-01-01T00:20:00.000Z" },
      "other",
    ],
  ];
  for (const [name, claim, expected] of cases) it(name, () => assert.equal(leaseState(claim, "s1", now), expected));

  it("leases run for the given seconds", () => {
    assert.equal(leaseUntil(new Date("2026-01-01T00:00:00.000Z"), 900), "2026-01-01T00:15:00.000Z");
  });
});

describe("readiness reasons", () => {
  const now = "2026-01-01T00:00:00.000Z";
  const me = { session: "s1", agent: "alice" };
  it("names every reason a task is not ready", () => {
    const held = task("x", {
      status: "in_progress",
      blocked: true,
      owner: "bob",
      claim_session: "s2",
      lease_expires_at: "2026-01-01T01:00:00.000Z",
    });
    assert.deepEqual(readinessReasons(held, now, ["tkt-blocker1"], me), [
      "status is in_progress, not open",
      "blocked by unfinished tkt-blocker1",
      "claimed by bob until 2026-01-01T01:00:00.000Z",
    ]);
  });
  it("names an assignment to another agent", () =>
    assert.deepEqual(readinessReasons(task("x", { owner: "bob" }), now, [], me), ["assigned to bob"]));
  it("has no reason for a ready task, a task assigned to me, or one my session holds", () => {
    assert.deepEqual(readinessReasons(task("x"), now, [], me), []);
    assert.deepEqual(readinessReasons(task("x", { owner: "alice" }), now, [], me), []);
    const mine = task("x", { owner: "alice", claim_session: "s1", lease_expires_at: "2026-01-01T01:00:00.000Z" });
    assert.deepEqual(readinessReasons(mine, now, [], me), []);
  });
});
