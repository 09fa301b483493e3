import assert from "node:assert/strict";
import { it } from "node:test";
import { ids, type StoreFactory, suite, useStore } from "./harness.js";

/** critical_path, parallel_groups and bottlenecks over the blocks graph, globally and under a parent. */
export function analysisContract(factory: StoreFactory): void {
  suite("graph analysis", () => {
    const p = useStore(factory);

    /** design -> api -> ui -> release, design -> docs; lint alone; plus a finished and a foreign task. */
    async function project() {
      const epic = await p().task("epic");
      const design = await p().task("design", { parent_id: epic, priority: 1 });
      const api = await p().task("api", { parent_id: epic, blocked_by: [design] });
      const ui = await p().task("ui", { parent_id: epic, blocked_by: [api] });
      const docs = await p().task("docs", { parent_id: epic, blocked_by: [design], priority: 3 });
      const release = await p().task("release", { blocked_by: [ui] });
      const lint = await p().task("lint", { priority: 0 });
      const old = await p().task("old", { status: "completed" });
      await p().task("foreign", { list_id: "other", blocked_by: [] });
      await p().ok("arbeit_relationship", { action: "add", from_task_id: old, to_task_id: lint, type: "blocks" });
      return { epic, design, api, ui, docs, release, lint };
    }

    it("finds the longest chain of unfinished work", async () => {
      const t = await project();
      const path = await p().ok("arbeit_query", { query: "critical_path", params: { list_id: "default" } });
      assert.equal(path.length, 4);
      assert.deepEqual(ids(path.tasks), [t.design, t.api, t.ui, t.release]);
      const under = await p().ok("arbeit_query", { query: "critical_path", params: { parent_id: t.epic } });
      assert.deepEqual(ids(under.tasks), [t.design, t.api, t.ui]);
      const edges = await p().read((tx) => tx.blockEdges({ list_id: "default" }));
      assert.deepEqual(
        edges.map(([a, b]) => `${a}>${b}`).sort(),
        [`${t.design}>${t.api}`, `${t.api}>${t.ui}`, `${t.design}>${t.docs}`, `${t.ui}>${t.release}`].sort(),
      );
    });

    it("offers the best single task when there are no dependencies", async () => {
      await p().task("b", { priority: 2 });
      const a = await p().task("a", { priority: 1 });
      const path = await p().ok("arbeit_query", { query: "critical_path" });
      assert.deepEqual(ids(path.tasks), [a]);
    });

    it("layers unfinished work into groups that can run side by side", async () => {
      const t = await project();
      const groups = (await p().ok("arbeit_query", { query: "parallel_groups", params: { list_id: "default" } }))
        .groups;
      assert.deepEqual(
        groups.map((g: { layer: number; count: number; tasks: Array<{ id: string }> }) => [
          g.layer,
          g.count,
          ids(g.tasks),
        ]),
        [
          // The epic is in layer 0 (nothing blocks it) but is not work to start: its children are.
          [0, 3, [t.lint, t.design]],
          [1, 2, [t.api, t.docs]],
          [2, 1, [t.ui]],
          [3, 1, [t.release]],
        ],
      );
      const ready = ids((await p().ok("arbeit_query", { query: "ready", params: { list_id: "default" } })).tasks);
      assert.deepEqual(ready, [t.lint, t.design], "layer 0 shows what ready offers");
      const under = await p().read((tx) => tx.unblockedUnfinished({ under: t.epic, limit: 10 }));
      assert.deepEqual([under.total, ids(under.tasks)], [1, [t.design]]);
    });

    it("ranks bottlenecks by how much unfinished work they hold up", async () => {
      const t = await project();
      const ranked = (await p().ok("arbeit_query", { query: "bottlenecks", params: { list_id: "default" } })).tasks;
      assert.deepEqual(
        ranked.map((r: { id: string; blocks_total: number; blocks_directly: number }) => [
          r.id,
          r.blocks_total,
          r.blocks_directly,
        ]),
        [
          [t.design, 4, 2],
          [t.api, 2, 1],
          [t.ui, 1, 1],
        ],
      );
    });
  });
}
