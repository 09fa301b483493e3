import assert from "node:assert/strict";
import { before, test } from "node:test";
import { extractGlobalOptions } from "../../src/cli/global-options.js";
import { parseFlags } from "../../src/cli/schema-flags.js";
import { taskFragment } from "../../src/fragments/task-fragment.js";
import { INCLUDE_SECTIONS } from "../../src/service/briefing.js";
import type { SqlDb, SqlStore } from "../../src/store/sql/database.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * A project far larger than any bind list or argument list may be: one task blocks 200,000
 * others, those 200,000 form one chain of blocks edges, and they are the leaves of a four-level
 * tree under one parent. Every read and write that reaches the whole of it must still answer.
 */
const N = 200_000;
/** The tree is as deep as the hierarchy goes: 60 groups of 60 subgroups hold the 200,000 leaves. */
const FAN_OUT = 60;
const SUBGROUPS = FAN_OUT * FAN_OUT;
const ROWS_PER_INSERT = 1000;
const AT = "2025-01-01T00:00:00.000Z";

const HUB = "tkt-hub00001";
const PARENT = "tkt-par00001";
const id = (prefix: string, i: number) => `${prefix}${i.toString(36).padStart(12 - prefix.length, "0")}`;
const dependant = (i: number) => id("tkt-d", i);
const group = (i: number) => id("tkt-g", i);
const subgroup = (i: number) => id("tkt-s", i);
const FIRST = dependant(0);
const LAST = dependant(N - 1);

/** Multi-row inserts of `count` rows, each row `row` placeholders long. */
async function insertRows(
  db: SqlDb,
  head: string,
  row: string,
  count: number,
  values: (i: number) => Array<string | number>,
): Promise<void> {
  for (let start = 0; start < count; start += ROWS_PER_INSERT) {
    const end = Math.min(start + ROWS_PER_INSERT, count);
    const params: Array<string | number> = [];
    const rows: string[] = [];
    for (let i = start; i < end; i++) {
      rows.push(row);
      for (const value of values(i)) params.push(value);
    }
    await db.run(`${head} VALUES ${rows.join(", ")}`, ...params);
  }
}

/**
 * Rows written straight into the store, as the service would leave them, a thousand to a
 * statement. SQLite's triggers keep open_edge, open_children and open_blockers up to date as the
 * rows go in; Postgres runs its triggers as statements per row, minutes for this many rows, so
 * there they are held off and the three columns written directly.
 */
async function seed(project: HostileProject): Promise<void> {
  const store = project.service.store as unknown as SqlStore;
  const postgres = project.engine === "postgres";
  await store.transaction("write", async (db) => {
    const task = "INSERT INTO tasks (id, title, status, priority, created_at, updated_at)";
    await db.run(
      `${task} VALUES (?, 'hub', 'open', 1, ?, ?), (?, 'parent', 'open', 2, ?, ?)`,
      HUB,
      AT,
      AT,
      PARENT,
      AT,
      AT,
    );
    await insertRows(db, task, "(?, 'group', 'open', 2, ?, ?)", FAN_OUT, (i) => [group(i), AT, AT]);
    await insertRows(db, task, "(?, 'subgroup', 'open', 2, ?, ?)", SUBGROUPS, (i) => [subgroup(i), AT, AT]);
    await insertRows(db, task, "(?, 'dependant', 'open', 2, ?, ?)", N, (i) => [dependant(i), AT, AT]);
    if (postgres) await db.run("ALTER TABLE relationships DISABLE TRIGGER USER");
    const edge = "INSERT INTO relationships (id, from_task_id, to_task_id, type, open_edge, created_at)";
    // open_edge as the triggers keep it: 1 for an open edge, 2 for one whose blocker is a hub
    // (over 100 edges out) and whose state readers look up, 0 for other edges.
    const edges = (kind: string, count: number, ends: (i: number) => [string, string], type = "blocks", flag = 1) =>
      insertRows(db, edge, `(?, ?, ?, '${type}', ${type === "blocks" ? flag : 0}, ?)`, count, (i) => [
        id(`rel-${kind}`, i),
        ...ends(i),
        AT,
      ]);
    await edges("a", N, (i) => [HUB, dependant(i)], "blocks", 2);
    await edges("b", N - 1, (i) => [dependant(i), dependant(i + 1)]);
    await edges("p", FAN_OUT, (i) => [PARENT, group(i)], "parent_of");
    await edges("g", SUBGROUPS, (i) => [group(i % FAN_OUT), subgroup(i)], "parent_of");
    await edges("s", N, (i) => [subgroup(i % SUBGROUPS), dependant(i)], "parent_of");
    if (postgres) {
      await db.run("ALTER TABLE relationships ENABLE TRIGGER USER");
      await db.run(`UPDATE tasks SET open_children = c.n FROM (SELECT from_task_id, COUNT(*) AS n FROM relationships
          WHERE type = 'parent_of' GROUP BY from_task_id) c WHERE tasks.id = c.from_task_id`);
      await db.run(`UPDATE tasks SET open_blockers = c.n FROM (SELECT to_task_id, COUNT(*) AS n FROM relationships
          WHERE open_edge = 1 GROUP BY to_task_id) c WHERE tasks.id = c.to_task_id`);
    }
  });
  // A real store this size has had autovacuum analyse it; plan the reads as it would.
  if (postgres) await store.transaction("write", (db) => db.run("ANALYZE"));
}

forEachEngine(`a task blocking ${N} others`, (project) => {
  let p: HostileProject;
  const session = { session: "ses-scale", agent: "scale" };

  before(async () => {
    p = await project();
    await seed(p);
  });

  test("resume for a session working on it", async () => {
    await p.ok("arbeit_task_start_work", { task_id: HUB }, session);
    const note = { task_id: LAST, type: "note", content: "the last dependant moved" };
    await p.ok("arbeit_context_add", note, { session: "ses-other", agent: "other" });
    const peek = await p.ok("arbeit_resume", { peek: true }, session);
    assert.equal(peek.focus.task.id, HUB);
    // A change to any dependant is news to the session working on the task they wait for.
    assert.ok(peek.events.shown.some((event: { task_id: string }) => event.task_id === LAST));
    const packet = await p.ok("arbeit_resume", {}, session);
    assert.equal(packet.focus.task.id, HUB);
    assert.ok(packet.events.total >= 1);
  });

  test("task_get with every include", async () => {
    const include = [...INCLUDE_SECTIONS];
    const hub = await p.ok("arbeit_task_get", { task_id: HUB, include });
    assert.equal(hub.blocking.length, N);
    assert.equal(hub.relationships.length, N);
    // The library's prompt text of that briefing lists every dependant.
    assert.ok(taskFragment(hub).includes(LAST));
    const leaf = await p.ok("arbeit_task_get", { task_id: LAST, include });
    assert.equal(leaf.parent.id, subgroup((N - 1) % SUBGROUPS));
    const first = await p.ok("arbeit_task_get", { task_id: FIRST, include });
    assert.deepEqual(
      first.blocked_by.map((t: { id: string }) => t.id),
      [HUB],
    );
  });

  test("critical_path, parallel_groups and bottlenecks over the whole store and under the parent", async () => {
    const path = await p.ok("arbeit_query", { query: "critical_path" });
    assert.equal(path.length, N + 1);
    assert.equal(path.tasks[0].id, HUB);
    const under = await p.ok("arbeit_query", { query: "critical_path", params: { parent_id: PARENT } });
    assert.equal(under.length, N);
    assert.equal(under.tasks[0].id, FIRST);

    const groups = await p.ok("arbeit_query", { query: "parallel_groups" });
    assert.equal(groups.layers_total, N + 1);
    const groupsUnder = await p.ok("arbeit_query", { query: "parallel_groups", params: { parent_id: PARENT } });
    assert.equal(groupsUnder.layers_total, N);

    const bottlenecks = await p.ok("arbeit_query", { query: "bottlenecks" });
    assert.equal(bottlenecks.tasks[0].id, HUB);
    assert.equal(bottlenecks.tasks[0].blocks_total, N);
    assert.equal(bottlenecks.tasks[0].blocks_directly, N);
    const bottlenecksUnder = await p.ok("arbeit_query", { query: "bottlenecks", params: { parent_id: PARENT } });
    assert.equal(bottlenecksUnder.tasks[0].id, FIRST);
    assert.equal(bottlenecksUnder.tasks[0].blocks_total, N - 1);
  });

  test("blocked_tasks, blocking_tasks, children_of, descendants_of and ancestors_of", async () => {
    const blocked = await p.ok("arbeit_query", { query: "blocked_tasks", params: { limit: 10 } });
    assert.equal(blocked.tasks.length, 10);
    assert.equal(blocked.has_more, true);
    const blocking = await p.ok("arbeit_query", { query: "blocking_tasks", params: { limit: 10 } });
    assert.equal(blocking.tasks.length, 10);
    const children = await p.ok("arbeit_query", { query: "children_of", params: { task_id: PARENT } });
    assert.equal(children.tasks.length, FAN_OUT);
    const descendants = await p.ok("arbeit_query", { query: "descendants_of", params: { task_id: PARENT } });
    assert.equal(descendants.tasks.length, 1000);
    assert.equal(descendants.has_more, true);
    const ancestors = await p.ok("arbeit_query", { query: "ancestors_of", params: { task_id: LAST } });
    assert.deepEqual(
      ancestors.tasks.map((t: { id: string }) => t.id),
      [subgroup((N - 1) % SUBGROUPS), group((N - 1) % FAN_OUT), PARENT],
    );
  });

  test("an edge that would close a 200,000-long cycle is refused as a cycle", async () => {
    const edge = { action: "add", from_task_id: LAST, to_task_id: HUB, type: "blocks" };
    // Asked by the session that holds the hub, whose graph it is to change.
    const holder = await p.call("arbeit_relationship", edge, session);
    assert.equal(holder.success, false);
    assert.equal(holder.error.code, "CIRCULAR_DEPENDENCY");
    // An edge wrong in itself is refused for that, not for the claim, whoever asks.
    const other = await p.call("arbeit_relationship", edge, { session: "ses-other", agent: "other" });
    assert.equal(other.success, false);
    assert.equal(other.error.code, "CIRCULAR_DEPENDENCY");
  });

  test("completing it, reopening it and deleting it", async () => {
    await p.ok("arbeit_task_update", { task_id: HUB, status: "completed" }, session);
    const next = await p.ok("arbeit_query", { query: "next" });
    assert.equal(next.task.id, FIRST);
    const resumed = await p.ok("arbeit_resume", {}, session);
    assert.notEqual(resumed.focus.task?.id, HUB);

    await p.ok("arbeit_task_update", { task_id: HUB, status: "open" }, session);
    assert.equal((await p.ok("arbeit_task_get", { task_id: FIRST })).task.blocked, true);

    await p.ok("arbeit_task_delete", { task_id: HUB }, session);
    assert.equal((await p.ok("arbeit_task_get", { task_id: FIRST })).task.blocked, false);
    const bottlenecks = await p.ok("arbeit_query", { query: "bottlenecks" });
    assert.equal(bottlenecks.tasks[0].id, FIRST);
  });
});

test(`the CLI's argument parsing takes ${N} words after --`, () => {
  const words = Array.from({ length: N }, (_, i) => `w${i}`);
  const { rest } = extractGlobalOptions(["--", ...words]);
  assert.equal(rest.length, N + 1);
  const args = parseFlags(rest, [], [], "items");
  assert.equal((args.items as string[]).length, N);
  assert.equal((args.items as string[])[N - 1], `w${N - 1}`);
});
