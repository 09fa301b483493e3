import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { newStats, runSteps, TOOL_NAMES } from "./harness.js";
import { stepArbitrary } from "./steps.js";

/**
 * Model-based fuzzing of every catalogue tool (read at run time), with a fixed seed so that
 * `npm test` is repeatable and quick. `npm run fuzz` runs the same harness for 100,000+ calls.
 */

describe("fuzz: random sequences of every tool against the reference model", () => {
  it("keeps every invariant (fixed seed)", async () => {
    const stats = newStats();
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary(), { minLength: 20, maxLength: 80 }), (steps) =>
        runSteps(steps, stats, { integrityEvery: 1, historyEvery: 25 }),
      ),
      { seed: 20_260_101, numRuns: 20, includeErrorInReport: true },
    );
    assert.ok(stats.calls > 500, `only ${stats.calls} calls`);
    // Every tool was exercised and succeeded at least once.
    for (const tool of TOOL_NAMES.filter((name) => name !== "arbeit_init")) {
      assert.ok(
        [...stats.eventRules.keys()].some((key) => key.startsWith(tool)),
        `${tool} never succeeded`,
      );
    }
  });
});
