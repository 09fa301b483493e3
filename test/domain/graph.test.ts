import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { criticalPath, dependencyLayers, type Edge, topBottlenecks } from "../../src/domain/graph.js";

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
  const sorted = ({ deepest, blocked, layers }: ReturnType<typeof dependencyLayers>) => ({
    deepest,
    blocked,
    layers: layers.map((ids) => [...ids].sort()),
  });
  it("puts each task one layer after its latest blocker", () => {
    assert.deepEqual(sorted(dependencyLayers(diamond, 10)), {
      deepest: 3,
      blocked: 4,
      layers: [["a"], ["b", "c"], ["d"], ["e"]],
    });
  });
  it("layers independent chains side by side", () => {
    const chains: Edge[] = [
      ["a", "b"],
      ["x", "y"],
    ];
    assert.deepEqual(sorted(dependencyLayers(chains, 10)), {
      deepest: 1,
      blocked: 2,
      layers: [
        ["a", "x"],
        ["b", "y"],
      ],
    });
  });
  it("lists the tasks of the first layers only, and says how deep the rest go", () => {
    const chain: Edge[] = Array.from({ length: 99 }, (_, i) => [`t${i}`, `t${i + 1}`]);
    const { deepest, blocked, layers } = dependencyLayers(chain, 3);
    assert.equal(deepest, 99);
    assert.equal(blocked, 99);
    assert.deepEqual(layers, [["t0"], ["t1"], ["t2"], ["t3"]]);
  });
  it("has one empty layer 0 without edges", () => {
    assert.deepEqual(dependencyLayers([], 5), { deepest: 0, blocked: 0, layers: [[]] });
  });
});

describe("top bottlenecks", () => {
  it("counts every task held up downstream, once, most first", () => {
    assert.deepEqual(topBottlenecks(diamond, 10), [
      { id: "a", blocks: 4, direct: 2 },
      { id: "b", blocks: 2, direct: 1 },
      { id: "c", blocks: 2, direct: 1 },
      { id: "d", blocks: 1, direct: 1 },
    ]);
  });
  it("keeps only the top `limit`, breaking ties by direct count then id", () => {
    assert.deepEqual(
      topBottlenecks(diamond, 2).map((b) => b.id),
      ["a", "b"],
    );
  });
  it("is exact where paths rejoin (the bound alone would count d and e twice)", () => {
    const wide: Edge[] = [...diamond, ["x", "a"]];
    assert.deepEqual(topBottlenecks(wide, 1), [{ id: "x", blocks: 5, direct: 1 }]);
  });
  it("matches a walk from every task on a random graph", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const edges: Edge[] = [];
    for (let i = 0; i < 300; i++) {
      const a = Math.floor(random() * 60);
      const b = Math.floor(random() * 60);
      if (a < b) edges.push([`n${String(a).padStart(2, "0")}`, `n${String(b).padStart(2, "0")}`]);
    }
    const unique = [...new Map(edges.map((e) => [e.join(">"), e])).values()];
    const reach = (id: string): number => {
      const seen = new Set<string>();
      const stack = unique.filter(([a]) => a === id).map(([, b]) => b);
      while (stack.length > 0) {
        const next = stack.pop()!;
        if (seen.has(next)) continue;
        seen.add(next);
        for (const [a, b] of unique) if (a === next) stack.push(b);
      }
      return seen.size;
    };
    for (const entry of topBottlenecks(unique, 15)) assert.equal(entry.blocks, reach(entry.id), entry.id);
    const best = Math.max(...[...new Set(unique.map(([a]) => a))].map(reach));
    assert.equal(topBottlenecks(unique, 1)[0]!.blocks, best);
  });
  it("handles a long chain", () => {
    const chain: Edge[] = Array.from(
      { length: 999 },
      (_, i) => [`t${String(i).padStart(3, "0")}`, `t${String(i + 1).padStart(3, "0")}`] as const,
    );
    const top = topBottlenecks(chain, 3);
    assert.deepEqual(
      top.map((b) => [b.id, b.blocks]),
      [
        ["t000", 999],
        ["t001", 998],
        ["t002", 997],
      ],
    );
  });
});
