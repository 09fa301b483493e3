import assert from "node:assert/strict";
import { before, test } from "node:test";
import type { SqlStore } from "../../src/store/sql/database.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * Finishing, reopening or deleting a task that blocks more than 100 others (a hub) writes no edge
 * row: its state is read when a query needs it, so a hub blocking 200,000 costs what one blocking
 * 101 does. The edges of a task blocking fewer carry its state, and a hub is made or unmade by the
 * edge that crosses the bound.
 */
const HUB_BOUND = 100;

async function flags(project: HostileProject, from: string): Promise<number[]> {
  const store = project.service.store as unknown as SqlStore;
  const rows = await store.transaction("read", (db) =>
    db.all(
      "SELECT open_edge FROM relationships WHERE from_task_id = ? AND type = 'blocks' AND removed_at IS NULL ORDER BY id",
      from,
    ),
  );
  return rows.map((row) => Number(row.open_edge));
}

async function edgeRows(project: HostileProject): Promise<string> {
  const store = project.service.store as unknown as SqlStore;
  const rows = await store.transaction("read", (db) =>
    db.all("SELECT id, from_task_id, to_task_id, type, removed_at, open_edge FROM relationships ORDER BY id"),
  );
  return JSON.stringify(rows);
}

forEachEngine("a blocker's state", (project) => {
  let p: HostileProject;
  const create = async (title: string, priority: number): Promise<string> =>
    (await p.ok("arbeit_task_create", { title, priority })).task.id;
  const block = (from: string, to: string) =>
    p.ok("arbeit_relationship", { action: "add", from_task_id: from, to_task_id: to, type: "blocks" });
  const blocked = async (id: string): Promise<boolean> => (await p.ok("arbeit_task_get", { task_id: id })).task.blocked;

  before(async () => {
    p = await project();
  });

  test("a hub: completing, reopening and deleting it leaves every edge row as it was", async () => {
    const hub = await create("hub", 1);
    const dependants: string[] = [];
    for (let i = 0; i <= HUB_BOUND; i++) {
      const id = await create(`dependant ${i}`, 2);
      await block(hub, id);
      dependants.push(id);
    }
    const [first] = dependants as [string];
    assert.deepEqual(new Set(await flags(p, hub)), new Set([2]));
    const edges = await edgeRows(p);
    assert.equal((await p.ok("arbeit_query", { query: "next" })).task.id, hub);

    await p.ok("arbeit_task_update", { task_id: hub, status: "completed" });
    assert.equal(await edgeRows(p), edges);
    assert.equal(await blocked(first), false);
    assert.equal((await p.ok("arbeit_query", { query: "parallel_groups" })).layers_total, 1);

    await p.ok("arbeit_task_update", { task_id: hub, status: "open" });
    assert.equal(await edgeRows(p), edges);
    assert.equal(await blocked(first), true);
    assert.equal((await p.ok("arbeit_query", { query: "next" })).task.id, hub);
    assert.equal((await p.ok("arbeit_query", { query: "parallel_groups" })).layers_total, 2);

    // Removing one edge leaves it 100: no hub, its edges carry its state again.
    await p.ok("arbeit_relationship", { action: "remove", from_task_id: hub, to_task_id: first, type: "blocks" });
    assert.deepEqual(new Set(await flags(p, hub)), new Set([1]));
    await block(hub, first);
    assert.deepEqual(new Set(await flags(p, hub)), new Set([2]));

    const before = await edgeRows(p);
    await p.ok("arbeit_task_delete", { task_id: hub });
    assert.equal(await edgeRows(p), before);
    assert.equal(await blocked(first), false);
  });

  test("a task blocking a few: its edges follow its state, and each edge follows the task it blocks", async () => {
    const blocker = await create("blocker", 1);
    const a = await create("a", 2);
    const b = await create("b", 2);
    await block(blocker, a);
    await block(blocker, b);
    assert.deepEqual(await flags(p, blocker), [1, 1]);
    await p.ok("arbeit_task_update", { task_id: blocker, status: "completed" });
    assert.deepEqual(await flags(p, blocker), [0, 0]);
    assert.equal(await blocked(a), false);
    await p.ok("arbeit_task_update", { task_id: blocker, status: "open" });
    assert.deepEqual(await flags(p, blocker), [1, 1]);
    assert.equal(await blocked(a), true);
    await p.ok("arbeit_task_update", { task_id: a, status: "completed" });
    assert.deepEqual((await flags(p, blocker)).sort(), [0, 1]);
  });
});
