import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { leaseState, leaseUntil } from "../../src/domain/claims.js";
import { selectFocus } from "../../src/domain/focus.js";
import { readinessReasons } from "../../src/domain/readiness.js";
import type { Task } from "../../src/domain/types.js";
import { taskFixture } from "../helpers/fixtures.js";

const task = (id: string, patch: Partial<Task> = {}): Task => taskFixture({ id, title: id, ...patch });

describe("focus selection", () => {
  const inProgress = task("prev", { status: "in_progress" });
  const working = task("work", { status: "in_progress" });
  const claimed = task("claim");
  const ready = task("ready");
  const cases: Array<[string, Parameters<typeof selectFocus>[0], string | null, string]> = [
    [
      "keeps an in-progress focus over everything",
      { previous: inProgress, activeWork: working, claims: [claimed], ready: [ready] },
      "prev",
      "kept_in_progress_focus",
    ],
    [
      "drops a focus that is no longer in progress",
      { previous: task("prev", { status: "completed" }), activeWork: undefined, claims: [claimed], ready: [ready] },
      "claim",
      "claimed",
    ],
    [
      "takes the session's active work next",
      { previous: undefined, activeWork: working, claims: [claimed], ready: [ready] },
      "work",
      "active_work",
    ],
    [
      "then the most recent live claim",
      { previous: undefined, activeWork: undefined, claims: [claimed, task("older")], ready: [ready] },
      "claim",
      "claimed",
    ],
    [
      "skips finished claims",
      { previous: undefined, activeWork: undefined, claims: [task("done", { status: "completed" })], ready: [ready] },
      "ready",
      "best_ready",
    ],
    [
      "then the best ready task",
      { previous: undefined, activeWork: undefined, claims: [], ready: [ready] },
      "ready",
      "best_ready",
    ],
    ["else nothing", { previous: undefined, activeWork: undefined, claims: [], ready: [] }, null, "none"],
  ];
  for (const [name, candidates, id, reason] of cases) {
    it(name, () => {
      const focus = selectFocus(candidates);
      assert.equal(focus.task?.id ?? null, id);
      assert.equal(focus.reason, reason);
    });
  }
});

describe("lease state", () => {
  const now = "2026-01-01T00:10:00.000Z";
  const cases: Array<[string, Pick<Task, "owner" | "lease_expires_at">, "free" | "mine" | "other"]> = [
    ["unowned is free", { owner: null, lease_expires_at: null }, "free"],
    ["an owner without a lease holds nothing", { owner: "bob", lease_expires_at: null }, "free"],
    ["an expired lease is free", { owner: "bob", lease_expires_at: "2026-01-01T00:09:59.999Z" }, "free"],
    ["a lease ending now is over", { owner: "bob", lease_expires_at: now }, "free"],
    ["a live lease of mine", { owner: "alice", lease_expires_at: "2026-01-01T00:20:00.000Z" }, "mine"],
    ["a live lease of another", { owner: "bob", lease_expires_at: "2026-01-01T00:20:00.000Z" }, "other"],
  ];
  for (const [name, claim, expected] of cases) it(name, () => assert.equal(leaseState(claim, "alice", now), expected));

  it("leases run for the given seconds", () => {
    assert.equal(leaseUntil(new Date("2026-01-01T00:00:00.000Z"), 900), "2026-01-01T00:15:00.000Z");
  });
});

describe("readiness reasons", () => {
  const now = "2026-01-01T00:00:00.000Z";
  it("names every reason a task is not ready", () => {
    const held = task("x", {
      status: "in_progress",
      blocked: true,
      owner: "bob",
      lease_expires_at: "2026-01-01T01:00:00.000Z",
    });
    assert.deepEqual(readinessReasons(held, now, ["tkt-blocker1"]), [
      "status is in_progress, not open",
      "blocked by unfinished tkt-blocker1",
      "claimed by bob until 2026-01-01T01:00:00.000Z",
    ]);
  });
  it("has no reason for a ready task", () => assert.deepEqual(readinessReasons(task("x"), now, []), []));
});
