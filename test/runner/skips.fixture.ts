// Run by test/runner/summary.test.ts through scripts/test.mjs, never as part of the suite itself
// (its name does not end in .test.ts): one pass, one skipped test, one skipped describe block.
import { describe, it } from "node:test";

describe("a suite that needs a missing host", { skip: "no such host here" }, () => {
  it("would have run", () => {});
});

describe("a suite that runs", () => {
  it("passes", () => {});
  it("skips one test", { skip: "not on this machine" }, () => {});
});
