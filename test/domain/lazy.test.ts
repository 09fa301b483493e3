import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lazyProperty } from "../../src/schemas/lazy.js";

/** Tool schemas are built on first read: the CLI's start-up must not pay for all of them. */
describe("lazyProperty", () => {
  it("builds the value once, on first read", () => {
    let builds = 0;
    const lazy = lazyProperty({ name: "t", input: "unused" }, "input", () => ++builds);
    assert.equal(builds, 0);
    assert.equal(lazy.input, 1);
    assert.equal(lazy.input, 1);
    assert.equal(builds, 1);
    assert.equal(lazy.name, "t");
  });

  it("wrapping an object that is lazy already builds neither value (as the catalogue wraps each tool)", () => {
    let inner = 0;
    let outer = 0;
    const tool = lazyProperty({ name: "t", input: 0 }, "input", () => ++inner);
    const wrapped = lazyProperty(tool, "input", () => ++outer + tool.input * 10);
    assert.deepEqual([inner, outer], [0, 0]);
    assert.equal(wrapped.input, 11);
    assert.deepEqual([inner, outer], [1, 1]);
  });
});
