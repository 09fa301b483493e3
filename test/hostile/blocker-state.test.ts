import assert from "node:assert/strict";
import { before, test } from "node:test";
import type { SqlStore } from "../../src/store/sql/database.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * Finishing, reopening or deleting a task that blocks others writes no edge row: the blocker's
 * state is read when a query needs it, so a task blocking 200,000 costs what one blocking none
 * does. Only the edges into a task follow that task's own state.
 */
async function edgeRows(project: HostileProject): Promise<string> {
  const store = project.service.store as unknown as SqlStore;
  const rows = await store.transaction("read", (db) =>
    db.all("SELECT id, from_task_id, to_task_id, type, removed_at, open_edge FROM relationships ORDER BY id"),
  );
  return JSON.stringify(rows);
}

forEachEngine("a blocker's state", (project) => {
  let p: HostileProject;
  let hub: string;
  let dependants: string[];

  before(async () => {
    p = await project();
    hub = (await p.ok("arbeit_task_create", { title: "hub", priority: 1 })).task.id;
    dependants = [];
    for (let i = 0; i < 3; i++) {
      const id = (await p.ok("arbeit_task_create", { title: `dependant ${i}`, priority: 2 })).task.id;
      await p.ok("arbeit_relationship", { action: "add", from_task_id: hub, to_task_id: id, type: "blocks" });
      dependants.push(id);
    }
  });

  const readyIds = async () =>
    (await p.ok("arbeit_query", { query: "ready" })).tasks.map((task: { id: string }) => task.id).sort();

  test("completing, reopening and deleting the blocker leaves every edge row as it was", async () => {
    const edges = await edgeRows(p);
    assert.deepEqual(await readyIds(), [hub]);

    await p.ok("arbeit_task_update", { task_id: hub, status: "completed" });
    assert.equal(await edgeRows(p), edges);
    assert.deepEqual(await readyIds(), [...dependants].sort());
    assert.equal((await p.ok("arbeit_query", { query: "parallel_groups" })).layers_total, 1);

    await p.ok("arbeit_task_update", { task_id: hub, status: "open" });
    assert.equal(await edgeRows(p), edges);
    assert.deepEqual(await readyIds(), [hub]);
    assert.equal((await p.ok("arbeit_query", { query: "parallel_groups" })).layers_total, 2);

    await p.ok("arbeit_task_delete", { task_id: hub });
    assert.equal(await edgeRows(p), edges);
    assert.deepEqual(await readyIds(), [...dependants].sort());
  });

  test("completing a blocked task closes the edges into it, and reopening it opens them again", async () => {
    const [first] = dependants as [string];
    const flag = async () => {
      const store = p.service.store as unknown as SqlStore;
      const row = await store.transaction("read", (db) =>
        db.get("SELECT open_edge FROM relationships WHERE to_task_id = ? AND type = 'blocks'", first),
      );
      return Number(row?.open_edge);
    };
    assert.equal(await flag(), 1);
    await p.ok("arbeit_task_update", { task_id: first, status: "completed" });
    assert.equal(await flag(), 0);
    await p.ok("arbeit_task_update", { task_id: first, status: "open" });
    assert.equal(await flag(), 1);
  });
});
