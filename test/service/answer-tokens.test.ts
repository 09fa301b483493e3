import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type AnswerProject,
  measureAnswers,
  openAnswerProject,
  populateReadyProject,
  READY_50_TOKEN_BUDGET,
} from "../../bench/answer-sizes.js";

/**
 * An agent pays for every token it reads. Counted with a real tokenizer (o200k_base), a count
 * depends on the answer alone, not on the machine or its load, so this is a budget, not a timing.
 * Only the random task ids move it, by a few tokens either way (1,437-1,457 over a dozen runs).
 */
describe("what an agent reads", () => {
  let p: AnswerProject;
  let fullTaskId: string;
  before(async () => {
    p = await openAnswerProject();
    ({ fullTaskId } = await populateReadyProject(p));
  });
  after(() => p.close());

  it(`a ready answer of 50 tasks costs at most ${READY_50_TOKEN_BUDGET} tokens`, async () => {
    const ready = await p.call("arbeit_query", { query: "ready", params: { limit: 50 } });
    assert.equal(ready.success && ready.data.tasks.length, 50);
    const sizes = await measureAnswers(p, fullTaskId);
    assert.ok(
      sizes.ready_50 <= READY_50_TOKEN_BUDGET,
      `ready with 50 tasks is ${sizes.ready_50} tokens (budget ${READY_50_TOKEN_BUDGET})`,
    );
  });

  it("a ready answer still names, for each task, what an agent chooses by", async () => {
    const ready = await p.call("arbeit_query", { query: "ready", params: { limit: 50 } });
    assert.ok(ready.success);
    const tasks = ready.data.tasks as Array<Record<string, unknown>>;
    assert.ok(tasks.every((t) => typeof t.id === "string" && typeof t.title === "string"));
    assert.ok(
      tasks.some((t) => t.parent_id),
      "parents shown",
    );
    assert.ok(
      tasks.some((t) => t.type),
      "types shown",
    );
    assert.ok(
      tasks.some((t) => t.priority === 1),
      "urgency shown",
    );
    assert.ok(
      tasks.some((t) => t.owner === "claude" && t.lease_expires_at),
      "the caller's claims shown",
    );
  });
});
