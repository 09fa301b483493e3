import assert from "node:assert/strict";
import { it } from "node:test";
import { forEachEngine, type HostileProject } from "./engines.js";
import { rawSql } from "./raw-sql.js";

/**
 * Doctor tells expected history from damage. Deleting a task keeps its row and its relationships
 * (a soft delete): links to it are history, reported for information and never a failure. A
 * relationship whose end has no task row at all, or one made to a task after it was deleted,
 * could only come from outside the tools: damage. And doctor holds every row to the rules the
 * tools and `arbeit import` hold rows to, so a bad row that got in some other way is found.
 */

interface Check {
  name: string;
  ok: boolean;
  findings: Array<{ message: string; [key: string]: unknown }>;
  total: number;
  fixed?: number;
}

async function doctor(project: HostileProject, args: string[] = []) {
  const result = await project.cli(["doctor", ...args]);
  assert.ok(result.json, result.stdout + result.stderr);
  const check = (name: string): Check => {
    const found = result.json.checks.find((c: Check) => c.name === name);
    assert.ok(found, `no check ${name} in ${result.stdout}`);
    return found;
  };
  return { code: result.code, ok: result.json.ok as boolean, checks: result.json.checks as Check[], check };
}

const mentions = (check: Check, text: string) => check.findings.some((f) => f.message.includes(text));

forEachEngine("doctor: history is not damage", (project) => {
  it("links left to tasks deleted through the tools are information; one to a missing task is a failure", async () => {
    const p = await project();
    const create = async (args: Record<string, unknown>) => (await p.ok("arbeit_task_create", args)).task.id;
    const a = await create({ title: "blocker, deleted" });
    const b = await create({ title: "blocked", blocked_by: [a] });
    const parent = await create({ title: "parent" });
    const child = await create({ title: "child, deleted", parent_id: parent });
    await p.ok("arbeit_relationship", { action: "add", type: "relates_to", from_task_id: b, to_task_id: parent });
    await p.ok("arbeit_task_delete", { task_id: a });
    await p.ok("arbeit_task_delete", { task_id: child });

    const healthy = await doctor(p);
    assert.equal(healthy.code, 0, JSON.stringify(healthy.checks.filter((c) => !c.ok)));
    assert.equal(healthy.ok, true);
    const history = healthy.check("relationships_to_deleted");
    assert.equal(history.ok, true);
    assert.equal(history.total, 2);
    assert.ok(mentions(history, a) && mentions(history, child), JSON.stringify(history.findings));
    assert.equal(healthy.check("orphan_relationships").total, 0);

    await rawSql(
      p,
      `INSERT INTO relationships (id, from_task_id, to_task_id, type, created_at)
       VALUES ('rel-ghost001', '${b}', 'tkt-zzzzzzzz', 'relates_to', '2026-01-01T00:00:00.000Z')`,
    );
    const damaged = await doctor(p);
    assert.equal(damaged.code, 1);
    assert.equal(damaged.ok, false);
    const orphans = damaged.check("orphan_relationships");
    assert.equal(orphans.ok, false);
    assert.equal(orphans.total, 1, JSON.stringify(orphans.findings));
    assert.ok(mentions(orphans, "rel-ghost001"), JSON.stringify(orphans.findings));
    assert.equal(damaged.check("relationships_to_deleted").ok, true);
  });

  it("a relationship made to a task after it was deleted is a failure", async () => {
    const p = await project();
    const a = (await p.ok("arbeit_task_create", { title: "deleted first" })).task.id;
    const b = (await p.ok("arbeit_task_create", { title: "linked later" })).task.id;
    await p.ok("arbeit_task_delete", { task_id: a });
    assert.equal((await doctor(p)).ok, true);
    await rawSql(
      p,
      `INSERT INTO relationships (id, from_task_id, to_task_id, type, created_at)
       VALUES ('rel-late0001', '${b}', '${a}', 'blocks', '2999-01-01T00:00:00.000Z')`,
    );
    const damaged = await doctor(p);
    assert.equal(damaged.ok, false);
    const orphans = damaged.check("orphan_relationships");
    assert.equal(orphans.ok, false);
    assert.ok(mentions(orphans, "rel-late0001"), JSON.stringify(orphans.findings));
    assert.match(orphans.findings[0]!.message, /after/);
  });

  it("--fix tidies links to deleted tasks away, each recorded as an event", async () => {
    const p = await project();
    const a = (await p.ok("arbeit_task_create", { title: "a" })).task.id;
    const b = (await p.ok("arbeit_task_create", { title: "b", blocked_by: [a] })).task.id;
    await p.ok("arbeit_task_delete", { task_id: a });
    const fixed = await doctor(p, ["--fix"]);
    assert.equal(fixed.code, 0);
    assert.equal(fixed.check("relationships_to_deleted").fixed, 1);
    assert.equal(fixed.check("relationships_to_deleted").total, 0);
    const events = await p.ok("arbeit_query", { query: "events", params: { task_id: b } });
    assert.ok(
      events.events.some((e: any) => e.event_type === "relationship_removed" && e.agent === "arbeit-doctor"),
      JSON.stringify(events.events.map((e: any) => e.event_type)),
    );
    assert.equal((await doctor(p)).ok, true);
  });
});

forEachEngine("doctor: the row rules", (project, engine) => {
  it("a memory value that is not JSON, written with raw SQL, fails the rules check naming the row", async () => {
    const p = await project();
    const { entry } = await p.ok("arbeit_memory", { action: "set", key: "style", value: "terse" });
    assert.equal((await doctor(p)).ok, true);
    await rawSql(p, `UPDATE memory SET value = '{oops' WHERE id = '${entry.id}'`);
    const report = await doctor(p);
    assert.equal(report.code, 1);
    const rules = report.check("rules");
    assert.equal(rules.ok, false);
    assert.equal(rules.findings[0]!.table, "memory");
    assert.equal(rules.findings[0]!.column, "value");
    assert.ok(mentions(rules, entry.id), JSON.stringify(rules.findings));
  });

  it("a blocks cycle and a counter behind the event log, written with raw SQL, fail the rules check", async () => {
    const p = await project();
    const x = (await p.ok("arbeit_task_create", { title: "x" })).task.id;
    const y = (await p.ok("arbeit_task_create", { title: "y", blocked_by: [x] })).task.id;
    await rawSql(
      p,
      `INSERT INTO relationships (id, from_task_id, to_task_id, type, created_at)
       VALUES ('rel-loop0001', '${y}', '${x}', 'blocks', '2026-01-01T00:00:00.000Z')`,
    );
    await rawSql(
      p,
      engine === "sqlite"
        ? "UPDATE sqlite_sequence SET seq = 1 WHERE name = 'events'"
        : "SELECT setval(pg_get_serial_sequence('events', 'seq'), 1)",
    );
    const rules = (await doctor(p)).check("rules");
    assert.equal(rules.ok, false);
    assert.ok(
      rules.findings.some((f) => /cycle/.test(f.message) && f.message.includes("rel-loop0001")),
      JSON.stringify(rules.findings),
    );
    assert.ok(
      rules.findings.some((f) => f.table === "sqlite_sequence" && f.column === "seq"),
      JSON.stringify(rules.findings),
    );
  });
});
