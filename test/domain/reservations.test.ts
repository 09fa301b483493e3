import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { literalPrefix, namedPaths, patternsOverlap, prefixesOf } from "../../src/domain/reservations.js";

describe("two reserved patterns conflict when some file could match both, in either direction", () => {
  const table: Array<[string, string, boolean]> = [
    ["src/a.ts", "src/a.ts", true],
    ["src/a.ts", "src/b.ts", false],
    ["src/**", "src/a.ts", true],
    ["src/a.ts", "src/**", true],
    ["src/**", "src/deep/er/a.ts", true],
    ["src/**", "srcx/a.ts", false],
    ["src/**", "src", true],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/deep/a.ts", false],
    ["src/*.ts", "src/a.*", true],
    ["src/*.ts", "src/*.md", false],
    ["src/a?.ts", "src/ab.ts", true],
    ["src/a?.ts", "src/abc.ts", false],
    ["**/*.md", "docs/x/readme.md", true],
    ["**/*.md", "docs/x/readme.ts", false],
    ["docs/**/a.md", "**/b/a.md", true],
    ["lib/**", "src/**", false],
    ["**", "anything/at/all.txt", true],
  ];
  for (const [a, b, expected] of table) {
    it(`${a} and ${b}: ${expected ? "conflict" : "no conflict"}`, () => {
      assert.equal(patternsOverlap(a, b), expected);
      assert.equal(patternsOverlap(b, a), expected, "symmetric");
    });
  }
});

describe("lookup keys", () => {
  it("a pattern's literal prefix is its folders before the first wildcard, or the whole path", () => {
    assert.equal(literalPrefix("src/auth/session.ts"), "src/auth/session.ts");
    assert.equal(literalPrefix("src/auth/*.ts"), "src/auth");
    assert.equal(literalPrefix("src/**/x.ts"), "src");
    assert.equal(literalPrefix("**/x.ts"), "");
  });
  it("a path can be matched only by patterns whose prefix is one of its folders or itself", () => {
    assert.deepEqual(prefixesOf("src/a/b.ts"), ["", "src", "src/a", "src/a/b.ts"]);
  });
});

describe("paths a plan names", () => {
  it("finds folders and file names, and leaves prose, urls and project names alone", () => {
    assert.deepEqual(
      namedPaths(
        "Change `src/auth/session.ts` and package.json, then docs/*.md. See https://x.io/a.md, e.g. Node.js; v1.2 is out.",
      ),
      ["src/auth/session.ts", "package.json", "docs/*.md"],
    );
    assert.deepEqual(namedPaths(null), []);
  });
});
