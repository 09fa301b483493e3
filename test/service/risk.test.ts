import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { forEachEngine } from "../hostile/engines.js";

/**
 * Risk and impact: optional low/medium/high on a task, set and cleared through the tools like any
 * other field, recorded in its events, kept by export and import, and understood by doctor.
 */
forEachEngine("risk and impact on tasks", (project) => {
  it("are null until assessed, and come back as set on create", async () => {
    const p = await project();
    const plain = (await p.ok("arbeit_task_create", { title: "plain" })).task;
    assert.equal(plain.risk, null);
    assert.equal(plain.impact, null);
    const risky = (await p.ok("arbeit_task_create", { title: "risky", risk: "high", impact: "medium" })).task;
    const got = (await p.ok("arbeit_task_get", { task_id: risky.id })).task;
    assert.equal(got.risk, "high");
    assert.equal(got.impact, "medium");
  });

  it("show in a listing's summary only when set", async () => {
    const p = await project();
    await p.ok("arbeit_task_create", { title: "plain" });
    await p.ok("arbeit_task_create", { title: "risky", risk: "low" });
    const { tasks } = await p.ok("arbeit_query", { query: "tasks" });
    const byTitle = Object.fromEntries(tasks.map((t: any) => [t.title, t]));
    assert.equal("risk" in byTitle.plain, false);
    assert.equal("impact" in byTitle.plain, false);
    assert.equal(byTitle.risky.risk, "low");
    assert.equal("impact" in byTitle.risky, false);
  });

  it("change through task_update, null clears, and task_updated records each change", async () => {
    const p = await project();
    const task = (await p.ok("arbeit_task_create", { title: "migrate billing" })).task;
    await p.ok("arbeit_task_update", { task_id: task.id, risk: "high", impact: "high" });
    const cleared = (await p.ok("arbeit_task_update", { task_id: task.id, risk: null })).task;
    assert.equal(cleared.risk, null);
    assert.equal(cleared.impact, "high");
    const { events } = await p.ok("arbeit_query", {
      query: "events",
      params: { task_id: task.id, event_types: ["task_updated"] },
    });
    assert.deepEqual(
      events.map((e: any) => e.payload.changes),
      [{ risk: { from: null, to: "high" }, impact: { from: null, to: "high" } }, { risk: { from: "high", to: null } }],
    );
  });

  it("refuse anything but low, medium or high", async () => {
    const p = await project();
    const bad = await p.call("arbeit_task_create", { title: "x", risk: "extreme" });
    assert.equal(bad.success === false && bad.error.code, "INVALID_ARGUMENT");
    const task = (await p.ok("arbeit_task_create", { title: "y" })).task;
    const badUpdate = await p.call("arbeit_task_update", { task_id: task.id, impact: 3 });
    assert.equal(badUpdate.success === false && badUpdate.error.code, "INVALID_ARGUMENT");
  });

  it("are set by CLI flags, survive export and import, and doctor replays them from the events", async () => {
    const source = await project();
    const created = await source.cli(["task", "create", "Swap the payment provider", "--risk", "high"]);
    assert.equal(created.code, 0, created.stdout + created.stderr);
    const id = created.json.data.task.id;
    const updated = await source.cli(["task", "update", id, "--impact", "medium"]);
    assert.equal(updated.code, 0, updated.stdout + updated.stderr);
    const other = (await source.ok("arbeit_task_create", { title: "assessed too soon", risk: "low" })).task;
    const cleared = await source.cli(["task", "update", other.id, "--risk", "null"]);
    assert.equal(cleared.json.data.task.risk, null, cleared.stdout + cleared.stderr);
    const doctor = await source.cli(["doctor"]);
    assert.equal(doctor.code, 0, doctor.stdout);

    const exported = await source.cli(["export"]);
    assert.equal(exported.code, 0, exported.stderr);
    const target = await project();
    const file = join(target.dir, "export.jsonl");
    writeFileSync(file, exported.stdout);
    const imported = await target.cli(["import", file]);
    assert.equal(imported.code, 0, imported.stdout + imported.stderr);
    const task = (await target.ok("arbeit_task_get", { task_id: id })).task;
    assert.deepEqual([task.risk, task.impact], ["high", "medium"]);
    const after = await target.cli(["doctor"]);
    assert.equal(after.code, 0, after.stdout);
  });
});

/**
 * Query risks: what to de-risk first. Unfinished tasks that are assessed or hold up other work,
 * by score = (1 + risk + impact) × (1 + dependants) − 1, with high 3, medium 2, low 1, unset 0.
 */
forEachEngine("query risks", (project) => {
  async function plan(p: Awaited<ReturnType<typeof project>>) {
    const create = async (title: string, args: Record<string, unknown> = {}) =>
      (await p.ok("arbeit_task_create", { title, ...args })).task.id as string;
    const schema = await create("schema");
    const api = await create("api", { risk: "low", blocked_by: [schema] });
    const ui = await create("ui", { impact: "medium", blocked_by: [api] });
    await create("readme");
    await create("provider swap", { risk: "high", impact: "high" });
    const done = await create("old spike", { risk: "high" });
    await p.ok("arbeit_task_update", { task_id: done, status: "cancelled" });
    return { schema, api, ui };
  }
  const rank = (tasks: any[]) =>
    tasks.map((t) => [t.title, t.score, t.dependants, t.on_critical_path ?? false] as const);

  it("ranks by score, then by how much waits on the task; marks the critical path", async () => {
    const p = await project();
    await plan(p);
    const { tasks } = await p.ok("arbeit_query", { query: "risks" });
    assert.deepEqual(rank(tasks), [
      ["provider swap", 6, 0, false],
      ["api", 3, 1, true],
      ["schema", 2, 2, true],
      ["ui", 2, 0, true],
    ]);
    // Listed like any other query: the compact summary, with the risk fields that are set.
    assert.equal(tasks[0].risk, "high");
    assert.equal("impact" in tasks[1], false);
  });

  it("leaves out finished tasks and unassessed tasks that block nothing", async () => {
    const p = await project();
    await plan(p);
    const titles = (await p.ok("arbeit_query", { query: "risks" })).tasks.map((t: any) => t.title);
    assert.equal(titles.includes("old spike"), false);
    assert.equal(titles.includes("readme"), false);
  });

  it("shows the first `limit` rows", async () => {
    const p = await project();
    await plan(p);
    const { tasks } = await p.ok("arbeit_query", { query: "risks", params: { limit: 2 } });
    assert.deepEqual(
      tasks.map((t: any) => t.title),
      ["provider swap", "api"],
    );
  });

  it("finishing a blocker takes it off the path and out of its dependants' count", async () => {
    const p = await project();
    const { schema } = await plan(p);
    await p.ok("arbeit_task_update", { task_id: schema, status: "cancelled" });
    const { tasks } = await p.ok("arbeit_query", { query: "risks" });
    assert.deepEqual(rank(tasks), [
      ["provider swap", 6, 0, false],
      ["api", 3, 1, true],
      ["ui", 2, 0, true],
    ]);
  });
});
