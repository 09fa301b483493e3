import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { criticalPath, dependencyLayers, type Edge, transitiveBlockCounts } from "../../src/domain/graph.js";

// a -> b means a must finish before b.
const diamond: Edge[] = [
  ["a", "b"],
  ["a", "c"],
  ["b", "d"],
  ["c", "d"],
  ["d", "e"],
];

describe("critical path", () => {
  const cases: Array<[string, Edge[], string[]]> = [
    ["no edges has no chain", [], []],
    ["a single edge is a chain of two", [["x", "y"]], ["x", "y"]],
    [
      "a chain is itself",
      [
        ["a", "b"],
        ["b", "c"],
        ["c", "d"],
      ],
      ["a", "b", "c", "d"],
    ],
    ["a diamond takes one branch, the first by id on a tie", diamond, ["a", "b", "d", "e"]],
    [
      "the longer of two independent chains wins",
      [
        ["p", "q"],
        ["x", "y"],
        ["y", "z"],
      ],
      ["x", "y", "z"],
    ],
  ];
  for (const [name, edges, expected] of cases) it(name, () => assert.deepEqual(criticalPath(edges), expected));
});

describe("dependency layers", () => {
  it("puts each task one layer after its latest blocker", () => {
    assert.deepEqual(Object.fromEntries(dependencyLayers(diamond)), { a: 0, b: 1, c: 1, d: 2, e: 3 });
  });
  it("layers independent chains side by side", () => {
    assert.deepEqual(
      Object.fromEntries(
        dependencyLayers([
          ["a", "b"],
          ["x", "y"],
        ]),
      ),
      { a: 0, b: 1, x: 0, y: 1 },
    );
  });
});

describe("transitive block counts", () => {
  it("counts every task held up downstream, once, most first", () => {
    assert.deepEqual(transitiveBlockCounts(diamond), [
      { id: "a", blocks: 4, direct: 2 },
      { id: "b", blocks: 2, direct: 1 },
      { id: "c", blocks: 2, direct: 1 },
      { id: "d", blocks: 1, direct: 1 },
    ]);
  });
  it("handles a long chain", () => {
    const chain: Edge[] = Array.from({ length: 999 }, (_, i) => [`t${i}`, `t${i + 1}`] as const);
    const counts = transitiveBlockCounts(chain);
    assert.equal(counts[0]!.id, "t0");
    assert.equal(counts[0]!.blocks, 999);
    assert.equal(counts.at(-1)!.blocks, 1);
  });
});
