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

/** Every task row but `except`, as stored: what finishing a hub must leave as it was. */
async function otherTaskRows(project: HostileProject, except: string): Promise<string> {
  const store = project.service.store as unknown as SqlStore;
  const rows = await store.transaction("read", (db) =>
    db.all("SELECT id, status, version, open_blockers FROM tasks WHERE id <> ? ORDER BY id", except),
  );
  return JSON.stringify(rows);
}

/**
 * Each task's open_blockers beside a recount from the graph itself: live blocks edges into it,
 * when it is live and unfinished, from a live, unfinished blocker with at most 100 live blocks
 * edges out (a hub's edges are read when asked, not counted). Only tasks where either is non-zero.
 */
async function blockerCounts(project: HostileProject): Promise<{ stored: string; recounted: string }> {
  const store = project.service.store as unknown as SqlStore;
  return store.transaction("read", async (db) => {
    const stored = await db.all("SELECT id, open_blockers AS n FROM tasks WHERE open_blockers <> 0 ORDER BY id");
    const recounted = await db.all(
      `WITH outs AS (SELECT from_task_id AS id, COUNT(*) AS n FROM relationships
                      WHERE type = 'blocks' AND removed_at IS NULL GROUP BY from_task_id)
       SELECT y.id, COUNT(*) AS n FROM relationships r
         JOIN tasks y ON y.id = r.to_task_id JOIN tasks x ON x.id = r.from_task_id
         JOIN outs ON outs.id = x.id
        WHERE r.type = 'blocks' AND r.removed_at IS NULL AND outs.n <= ${HUB_BOUND}
          AND y.deleted_at IS NULL AND y.status IN ('open', 'in_progress')
          AND x.deleted_at IS NULL AND x.status IN ('open', 'in_progress')
        GROUP BY y.id ORDER BY y.id`,
    );
    const text = (rows: Array<Record<string, unknown>>) => JSON.stringify(rows.map((row) => [row.id, Number(row.n)]));
    return { stored: text(stored), recounted: text(recounted) };
  });
}

/** A small seeded generator (mulberry32), so that a failing sequence can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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
    const others = await otherTaskRows(p, hub);
    assert.equal((await p.ok("arbeit_query", { query: "next" })).task.id, hub);

    await p.ok("arbeit_task_update", { task_id: hub, status: "completed" });
    assert.equal(await edgeRows(p), edges);
    assert.equal(await otherTaskRows(p, hub), others, "no task it blocks is written either");
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

  test("each task's count of open blockers equals a recount from the graph after any sequence of changes", async () => {
    const next = random(0x5eed);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
    const tasks: string[] = [];
    for (let i = 0; i < 16; i++) tasks.push(await create(`task ${i}`, i % 5));
    // A blocker one edge short of a hub, so that the sequence makes and unmakes it.
    const hub = await create("nearly a hub", 1);
    const fan: string[] = [];
    for (let i = 0; i < HUB_BOUND - 1; i++) {
      const id = await create(`fan ${i}`, 3);
      await block(hub, id);
      fan.push(id);
    }
    const hubEdges = new Set(fan);
    const statuses = ["open", "in_progress", "completed", "cancelled"];
    const live = () => tasks.filter((id) => id !== "");
    for (let step = 0; step < 300; step++) {
      const roll = next();
      const [a, b] = [pick(live()), pick(live())];
      const what = `step ${step}`;
      if (roll < 0.3) {
        // Refused when it would close a cycle or already exists: the count must hold either way.
        await p.call("arbeit_relationship", { action: "add", from_task_id: a, to_task_id: b, type: "blocks" });
      } else if (roll < 0.45) {
        await p.call("arbeit_relationship", { action: "remove", from_task_id: a, to_task_id: b, type: "blocks" });
      } else if (roll < 0.7) {
        await p.call("arbeit_task_update", { task_id: pick([a, hub, pick(fan)]), status: pick(statuses) });
      } else if (roll < 0.75) {
        await p.ok("arbeit_task_delete", { task_id: a });
        tasks[tasks.indexOf(a)] = "";
        tasks.push(await create(`task ${tasks.length}`, step % 5));
      } else {
        // The hub gains or loses an edge, into the fan or into a task the others block.
        const to = next() < 0.5 ? pick(fan) : a;
        const action = hubEdges.has(to) ? "remove" : "add";
        const done = await p.call("arbeit_relationship", { action, from_task_id: hub, to_task_id: to, type: "blocks" });
        if (done.success) action === "add" ? hubEdges.add(to) : hubEdges.delete(to);
      }
      // A count that drifts stays wrong, so checking every tenth step finds it, and near where.
      if (step % 10 === 9) {
        const { stored, recounted } = await blockerCounts(p);
        assert.equal(stored, recounted, what);
      }
    }
    assert.ok(hubEdges.size > 0);
  });

  test("an edge written with any flag is counted as the triggers leave it", async () => {
    const store = p.service.store as unknown as SqlStore;
    const blocker = await create("blocker", 1);
    const open = await create("open", 2);
    const done = await create("done", 2);
    await p.ok("arbeit_task_update", { task_id: done, status: "completed" });
    const at = new Date().toISOString();
    await store.transaction("write", async (db) => {
      const insert =
        "INSERT INTO relationships (id, from_task_id, to_task_id, type, open_edge, created_at) VALUES (?, ?, ?, 'blocks', ?, ?)";
      await db.run(insert, "rel-flagged0", blocker, open, 0, at);
      await db.run(insert, "rel-flagged1", blocker, done, 1, at);
    });
    const { stored, recounted } = await blockerCounts(p);
    const counted = new Map(JSON.parse(stored) as Array<[string, number]>);
    assert.deepEqual([counted.get(blocker), counted.get(open), counted.get(done)], [undefined, 1, undefined]);
    assert.equal(stored, recounted);
  });
});
