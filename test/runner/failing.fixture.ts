// Run by test/runner/summary.test.ts through scripts/test.mjs, never as part of the suite itself:
// one test that passes and one that fails.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

describe("arithmetic", () => {
  it("passes", () => assert.equal(1 + 1, 2));
  it("adds two and two", () => assert.equal(2 + 2, 5, "two and two make four"));
});
