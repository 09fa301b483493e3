import assert from "node:assert/strict";
import { closeSync, copyFileSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type DoctorReport, runDoctor } from "../../src/maintenance/doctor.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { runCli } from "../helpers/cli.js";
import { openTestProject, type TestProject } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";
import { type Populated, populate } from "./populate.js";

/**
 * arbeit doctor against real databases: a healthy one is clean, and each check catches the
 * corruption aimed at it (raw SQL or raw bytes on a copy of a populated database).
 */
let project: TestProject;
let data: Populated;
let pristine: string;
let scratch: { dir: string; cleanup(): void };

before(async () => {
  project = await openTestProject();
  data = await populate(project, { tasks: 120 });
  project.store.driver.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  scratch = tempDir();
  pristine = join(scratch.dir, "pristine.db");
  await project.store.backup(pristine);
});
after(async () => {
  await project.close();
  scratch.cleanup();
});

let copies = 0;
/** A fresh copy of the populated database with `sql` applied behind the service's back. */
async function corrupted(sql: string): Promise<string> {
  const path = join(scratch.dir, `copy-${copies++}.db`);
  copyFileSync(pristine, path);
  const driver = await openDriver(path);
  driver.exec("PRAGMA foreign_keys = OFF");
  driver.exec(sql);
  driver.close();
  return path;
}

async function doctorOn(path: string, options: { fix?: boolean; now?: () => Date } = {}): Promise<DoctorReport> {
  const store = await SqliteTaskStore.open(path);
  try {
    return await runDoctor(store, options);
  } finally {
    await store.close();
  }
}

function check(report: DoctorReport, name: string) {
  const found = report.checks.find((c) => c.name === name);
  assert.ok(found, `no check ${name}`);
  return found;
}

function failing(report: DoctorReport): string[] {
  return report.checks.filter((c) => !c.ok).map((c) => c.name);
}

/** Every check doctor runs, in the order it reports them. */
const CHECKS = [
  "integrity",
  "foreign_keys",
  "orphan_relationships",
  "relationships_to_deleted",
  "expired_claims",
  "broken_leases",
  "history",
  "rules",
  "stored_secrets",
];

const ids = () => ({ task: data.tasks[5]!, other: data.tasks[6]! });

describe("a healthy database", () => {
  it("passes every check", async () => {
    const report = await runDoctor(project.store);
    assert.equal(report.ok, true, JSON.stringify(report.checks.filter((c) => !c.ok)));
    assert.deepEqual(
      report.checks.map((c) => c.name),
      CHECKS,
    );
  });
});

describe("integrity", () => {
  it("finds a corrupted index page", async () => {
    const path = join(scratch.dir, "torn.db");
    copyFileSync(pristine, path);
    const driver = await openDriver(path);
    const pageSize = driver.prepare("PRAGMA page_size").get<{ page_size: number }>()!.page_size;
    const root = driver
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'idx_events_type'")
      .get<{ rootpage: number }>()!.rootpage;
    driver.close();
    // Scribble over the cell content at the end of the index's root page.
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(200, 0x7a), 0, 200, root * pageSize - 200);
    closeSync(fd);
    const report = await doctorOn(path);
    assert.equal(report.ok, false);
    assert.equal(check(report, "integrity").ok, false);
    assert.ok(check(report, "integrity").findings.length > 0);
  });
});

describe("foreign keys", () => {
  it("finds rows pointing at tasks that do not exist", async () => {
    const path = await corrupted(
      `INSERT INTO progress_items (id, task_id, content, completed, created_at)
       VALUES ('prg-zzzzzzzz', 'tkt-zzzzzzzz', 'stray', 0, '2026-01-01T00:00:00.000Z')`,
    );
    const report = await doctorOn(path);
    const fk = check(report, "foreign_keys");
    assert.equal(fk.ok, false);
    assert.equal(fk.findings[0]!.table, "progress_items");
    assert.equal(fk.findings[0]!.parent, "tasks");
  });
});

describe("relationships to deleted tasks", () => {
  it("are history, not damage: listed for information, and --fix removes them with an event", async () => {
    const p = await openTestProject();
    const a = (await p.ok("arbeit_task_create", { title: "blocker, later deleted" })).task.id;
    const b = (await p.ok("arbeit_task_create", { title: "blocked", blocked_by: [a] })).task.id;
    const parent = (await p.ok("arbeit_task_create", { title: "parent" })).task.id;
    const child = (await p.ok("arbeit_task_create", { title: "child, later deleted", parent_id: parent })).task.id;
    await p.ok("arbeit_task_delete", { task_id: a });
    await p.ok("arbeit_task_delete", { task_id: child });
    const before = await runDoctor(p.store);
    assert.equal(before.ok, true, JSON.stringify(before.checks.filter((c) => !c.ok)));
    const history = check(before, "relationships_to_deleted");
    assert.equal(history.ok, true);
    assert.equal(history.total, 2);
    const versionBefore = (await p.ok("arbeit_task_get", { task_id: b })).task.version;

    const fixed = await runDoctor(p.store, { fix: true });
    assert.equal(fixed.ok, true, JSON.stringify(fixed.checks.filter((c) => !c.ok)));
    assert.equal(check(fixed, "relationships_to_deleted").fixed, 2);
    assert.equal(check(fixed, "relationships_to_deleted").total, 0);
    const events = p.store.driver
      .prepare("SELECT event_type, agent, payload FROM events WHERE agent = 'arbeit-doctor' ORDER BY seq")
      .all<{ event_type: string; payload: string }>();
    assert.deepEqual(
      events.map((e) => e.event_type),
      ["relationship_removed", "relationship_removed"],
    );
    assert.equal(JSON.parse(events[0]!.payload).reason, "orphan");
    // The live end of the removed blocks edge moved on, exactly as arbeit_relationship remove does.
    assert.equal((await p.ok("arbeit_task_get", { task_id: b })).task.version, versionBefore + 1);
    assert.equal((await runDoctor(p.store)).ok, true);
    await p.close();
  });
});

describe("orphan relationships", () => {
  it("finds one pointing at a task that does not exist, made with raw SQL, and --fix leaves it alone", async () => {
    const path = await corrupted(
      `UPDATE relationships SET to_task_id = 'tkt-zzzzzzzz'
       WHERE from_task_id = '${data.blocker}' AND to_task_id = '${data.blocked}'`,
    );
    const report = await doctorOn(path, { fix: true });
    const orphans = check(report, "orphan_relationships");
    assert.equal(orphans.ok, false);
    assert.match(orphans.findings[0]!.message, new RegExp(`${data.blocker} blocks tkt-zzzzzzzz`));
    assert.match(orphans.findings[0]!.message, /no task at all/);
    assert.equal(orphans.fixed, undefined);
  });
});

describe("expired claims", () => {
  it("finds a claim whose lease ran out, and --fix releases it as claim_expired", async () => {
    const p = await openTestProject();
    const task = (await p.ok("arbeit_task_create", { title: "claimed, agent gone" })).task.id;
    await p.ok("arbeit_task_claim", { task_id: task, lease_seconds: 60 }, { agent: "crashed-agent" });
    assert.equal((await runDoctor(p.store, { now: p.clock.now })).ok, true, "a live lease is fine");
    p.clock.advance(61_000);
    const report = await runDoctor(p.store, { now: p.clock.now });
    assert.deepEqual(failing(report), ["expired_claims"]);
    assert.equal(check(report, "expired_claims").findings[0]!.owner, "crashed-agent");

    const fixed = await runDoctor(p.store, { now: p.clock.now, fix: true });
    assert.equal(fixed.ok, true, JSON.stringify(fixed.checks.filter((c) => !c.ok)));
    assert.equal(check(fixed, "expired_claims").fixed, 1);
    const got = (await p.ok("arbeit_task_get", { task_id: task })).task;
    assert.equal(got.owner, null);
    assert.equal(got.lease_expires_at, null);
    const last = p.store.driver.prepare("SELECT event_type, agent FROM events ORDER BY seq DESC LIMIT 1").get();
    assert.deepEqual(last, { event_type: "claim_expired", agent: "arbeit-doctor" });
    await p.close();
  });

  it("finds one made with raw SQL", async () => {
    const { task } = ids();
    const path = await corrupted(
      `UPDATE tasks SET owner = 'ghost', lease_expires_at = '2000-01-01T00:00:00.000Z' WHERE id = '${task}'`,
    );
    const report = await doctorOn(path);
    assert.equal(check(report, "expired_claims").findings[0]!.task_id, task);
  });
});

describe("broken leases", () => {
  it("finds a lease that names no owner or no session, and --fix ends it, keeping the owner", async () => {
    const p = await openTestProject();
    const ownerless = (await p.ok("arbeit_task_create", { title: "lease, no owner" })).task.id;
    const sessionless = (await p.ok("arbeit_task_create", { title: "lease, no session", owner: "alice" })).task.id;
    const held = (await p.ok("arbeit_task_create", { title: "a real claim" })).task.id;
    await p.ok("arbeit_task_claim", { task_id: held });
    const until = "2026-01-01T01:00:00.000Z";
    p.store.driver
      .prepare("UPDATE tasks SET lease_expires_at = ? WHERE id IN (?, ?)")
      .run(until, ownerless, sessionless);
    const report = await runDoctor(p.store, { now: p.clock.now });
    assert.deepEqual(failing(report), ["broken_leases"]);
    assert.deepEqual(
      check(report, "broken_leases").findings.map((finding) => finding.task_id),
      [ownerless, sessionless].sort(),
    );
    const fixed = await runDoctor(p.store, { now: p.clock.now, fix: true });
    assert.equal(fixed.ok, true, JSON.stringify(fixed.checks.filter((c) => !c.ok)));
    const got = (id: string) =>
      p.store.driver.prepare("SELECT owner, lease_expires_at FROM tasks WHERE id = ?").get(id);
    assert.deepEqual({ ...(got(sessionless) as object) }, { owner: "alice", lease_expires_at: null });
    assert.deepEqual({ ...(got(ownerless) as object) }, { owner: null, lease_expires_at: null });
    assert.equal((got(held) as { lease_expires_at: string }).lease_expires_at, "2026-01-01T00:15:00.000Z");
    await p.close();
  });
});

describe("history: rows that disagree with their events", () => {
  const { task, other } = { task: "TASK", other: "OTHER" };
  const CASES: Array<[string, string, RegExp]> = [
    [
      "a title changed behind the log",
      `UPDATE tasks SET title = 'tampered' WHERE id = '${task}'`,
      /title is "tampered"/,
    ],
    ["a status changed", `UPDATE tasks SET status = 'cancelled' WHERE id = '${task}'`, /status is "cancelled"/],
    ["a version bumped", `UPDATE tasks SET version = version + 5 WHERE id = '${task}'`, /version is/],
    ["a priority changed", `UPDATE tasks SET priority = 4 - priority WHERE id = '${task}'`, /priority is/],
    ["a task undeleted", `UPDATE tasks SET deleted_at = NULL WHERE id = 'DELETED'`, /deleted_at is null/],
    ["a task deleted", `UPDATE tasks SET deleted_at = updated_at WHERE id = '${other}'`, /deleted_at is/],
    [
      "a task without its task_created event",
      `DELETE FROM events WHERE event_type = 'task_created' AND entity_id = '${task}'`,
      /has no task_created event/,
    ],
    [
      "a relationship no event added",
      `INSERT INTO relationships (id, from_task_id, to_task_id, type, created_at)
       VALUES ('rel-zzzzzzzz', '${task}', '${other}', 'duplicates', '2026-01-01T00:00:00.000Z')`,
      /rel-zzzzzzzz .* is not in the event history/,
    ],
    [
      "a relationship removed without an event",
      `UPDATE relationships SET removed_at = '2026-01-01T00:00:00.000Z'
       WHERE id = (SELECT id FROM relationships WHERE removed_at IS NULL AND type = 'blocks' LIMIT 1)`,
      /the events leave .* blocks .* live, but no live relationship row holds it/,
    ],
    [
      "context content edited",
      `UPDATE context_entries SET content = 'rewritten' WHERE rowid = 3`,
      /context entry ctx-\w+: content is "rewritten"/,
    ],
    [
      "a progress item ticked off without an event",
      "UPDATE progress_items SET completed = 1, completed_at = '2026-01-01T00:00:00.000Z' WHERE completed = 0 AND rowid = (SELECT MIN(rowid) FROM progress_items WHERE completed = 0)",
      /progress item prg-\w+: completed is true, its events say false/,
    ],
    [
      "an event payload that is not JSON",
      "UPDATE events SET payload = 'not json' WHERE seq = 2",
      /payload is not JSON/,
    ],
    [
      "an event of an unknown type",
      `INSERT INTO events (id, timestamp, event_type, entity_type, entity_id, task_id, payload)
       VALUES ('evt-zzzzzzzz', '2026-01-01T00:00:00.000Z', 'task_teleported', 'task', '${task}', '${task}', '{}')`,
      /task_teleported\) unknown event type/,
    ],
  ];
  for (const [label, sql, pattern] of CASES) {
    it(`finds ${label}`, async () => {
      const live = data.tasks.filter((id) => !data.deleted.includes(id));
      const path = await corrupted(
        sql.replaceAll("TASK", live[3]!).replaceAll("OTHER", live[4]!).replaceAll("DELETED", data.deleted[0]!),
      );
      const report = await doctorOn(path);
      const history = check(report, "history");
      assert.equal(history.ok, false, `${label} went unnoticed`);
      assert.ok(
        history.findings.some((f) => pattern.test(f.message)),
        `${label}: ${JSON.stringify(history.findings.map((f) => f.message))}`,
      );
      assert.equal(report.ok, false);
    });
  }

  it("--fix leaves history findings alone (only what is safe is repaired)", async () => {
    const live = data.tasks.filter((id) => !data.deleted.includes(id));
    const path = await corrupted(`UPDATE tasks SET title = 'tampered' WHERE id = '${live[3]}'`);
    const report = await doctorOn(path, { fix: true });
    assert.equal(check(report, "history").ok, false);
    assert.equal(check(report, "history").fixed, undefined);
  });
});

describe("arbeit doctor (CLI)", () => {
  it("prints {ok, checks} as JSON and exits 0 on a healthy database, 1 when something is wrong", async () => {
    const dir = tempDir();
    const init = await runCli(["init"], { cwd: dir.dir });
    assert.equal(init.code, 0);
    await runCli(["task", "create", "one"], { cwd: dir.dir });
    const healthy = await runCli(["doctor"], { cwd: dir.dir });
    assert.equal(healthy.code, 0, healthy.stdout);
    assert.equal(healthy.json.ok, true);
    assert.deepEqual(
      healthy.json.checks.map((c: { name: string }) => c.name),
      CHECKS,
    );
    for (const c of healthy.json.checks) assert.deepEqual(Object.keys(c).sort(), ["findings", "name", "ok", "total"]);

    const driver = await openDriver(join(dir.dir, ".arbeit", "arbeit.db"));
    driver.exec("UPDATE tasks SET title = 'tampered'");
    driver.close();
    const sick = await runCli(["doctor"], { cwd: dir.dir });
    assert.equal(sick.code, 1);
    assert.equal(sick.json.ok, false);
    assert.match(sick.json.checks.find((c: any) => c.name === "history").findings[0].message, /tampered/);

    const usage = await runCli(["doctor", "--frobnicate"], { cwd: dir.dir });
    assert.equal(usage.code, 2);
    dir.cleanup();
  });

  it("--fix tidies relationships to deleted tasks through the CLI and exits 0", async () => {
    const dir = tempDir();
    await runCli(["init"], { cwd: dir.dir });
    const a = (await runCli(["call", "arbeit_task_create", '{"title": "a"}'], { cwd: dir.dir })).json.data.task.id;
    await runCli(["call", "arbeit_task_create", JSON.stringify({ title: "b", blocked_by: [a] })], { cwd: dir.dir });
    await runCli(["call", "arbeit_task_delete", JSON.stringify({ task_id: a })], { cwd: dir.dir });
    assert.equal((await runCli(["doctor"], { cwd: dir.dir })).code, 0);
    const fixed = await runCli(["doctor", "--fix"], { cwd: dir.dir });
    assert.equal(fixed.code, 0, fixed.stdout);
    assert.equal(fixed.json.checks.find((c: any) => c.name === "relationships_to_deleted").fixed, 1);
    dir.cleanup();
  });

  it("outside a project it prints NOT_INITIALIZED", async () => {
    const dir = tempDir();
    const result = await runCli(["doctor"], { cwd: dir.dir });
    assert.equal(result.code, 1);
    assert.equal(result.json.error.code, "NOT_INITIALIZED");
    dir.cleanup();
  });
});
