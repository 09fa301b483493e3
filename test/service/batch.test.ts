import assert from "node:assert/strict";
import { it } from "node:test";
import { forEachEngine, type HostileProject } from "../hostile/engines.js";

/**
 * arbeit_batch: several writes as one transaction. Either every operation is written or none is;
 * a later operation names an earlier one's new id as "$<ref>"; a retry with the batch's
 * request_id writes nothing. Each case runs on SQLite and on Postgres.
 */

/** Everything a write could leave behind, read back through the tools. */
async function footprint(p: HostileProject) {
  const tasks = await p.ok("arbeit_query", { query: "tasks", params: { limit: 1000, fields: ["version"] } });
  const events = await p.ok("arbeit_query", { query: "events", params: { limit: 1000 } });
  const memory = await p.ok("arbeit_memory", { action: "list" });
  return { tasks: tasks.tasks, events: events.events.map((e: any) => e.seq), memory: memory.entries };
}

forEachEngine("arbeit_batch", (project) => {
  it("writes every operation in order, each later one using earlier ids through $refs", async () => {
    const p = await project();
    const data = await p.ok("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "Rate limiting", type: "epic" }, ref: "epic" },
        { tool: "arbeit_task_create", args: { title: "Token bucket", parent_id: "$epic" }, ref: "bucket" },
        { tool: "arbeit_task_create", args: { title: "429 responses", parent_id: "$epic" }, ref: "429" },
        {
          tool: "arbeit_relationship",
          args: { action: "add", from_task_id: "$bucket", type: "blocks", to_task_id: "$429" },
        },
        { tool: "arbeit_context_add", args: { task_id: "$bucket", type: "decision", content: "Per IP, 5 a minute" } },
        { tool: "arbeit_progress_add", args: { task_id: "$bucket", items: ["Middleware", "Tests"] } },
        { tool: "arbeit_memory", args: { action: "set", key: "limit", value: 5 } },
      ],
    });
    assert.deepEqual(
      data.results.map((r: any) => [r.tool, r.ref]),
      [
        ["arbeit_task_create", "epic"],
        ["arbeit_task_create", "bucket"],
        ["arbeit_task_create", "429"],
        ["arbeit_relationship", undefined],
        ["arbeit_context_add", undefined],
        ["arbeit_progress_add", undefined],
        ["arbeit_memory", undefined],
      ],
    );
    const [epic, bucket, limited] = data.results.slice(0, 3).map((r: any) => r.data.task.id);
    const got = await p.ok("arbeit_task_get", { task_id: bucket, include: ["context", "progress", "relationships"] });
    assert.equal(got.task.parent_id, epic);
    assert.equal(got.context[0].content, "Per IP, 5 a minute");
    assert.deepEqual(
      got.progress.map((item: any) => item.content),
      ["Middleware", "Tests"],
    );
    const blocked = await p.ok("arbeit_task_get", { task_id: limited, include: ["relationships"] });
    assert.equal(blocked.task.parent_id, epic);
    assert.ok(JSON.stringify(blocked).includes(bucket));
    assert.equal((await p.ok("arbeit_memory", { action: "get", key: "limit" })).entry.value, 5);
  });

  it("writes nothing when the last operation fails, and names it by index with its own error code", async () => {
    const p = await project();
    await p.ok("arbeit_task_create", { title: "Already here" });
    const before = await footprint(p);
    const result = await p.call("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "New one" }, ref: "new" },
        { tool: "arbeit_context_add", args: { task_id: "$new", type: "note", content: "written, then undone" } },
        { tool: "arbeit_memory", args: { action: "set", key: "k", value: 1 } },
        { tool: "arbeit_task_update", args: { task_id: "tkt-00000000", priority: 1 } },
      ],
    });
    assert.equal(result.success, false);
    if (result.success) return;
    assert.equal(result.error.code, "TASK_NOT_FOUND");
    assert.equal(result.error.details?.operation_index, 3);
    assert.equal(result.error.details?.tool, "arbeit_task_update");
    assert.match(result.error.message, /^Operation 3 \(arbeit_task_update\) failed, so nothing was written: /);
    assert.deepEqual(await footprint(p), before);
  });

  it("checks each operation's arguments against its tool's schema, by index, writing nothing", async () => {
    const p = await project();
    const before = await footprint(p);
    const result = await p.call("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "Fine" } },
        { tool: "arbeit_task_create", args: { title: "Bad", priority: 9 } },
      ],
    });
    assert.equal(result.success, false);
    if (result.success) return;
    assert.equal(result.error.details?.operation_index, 1);
    assert.match(result.error.message, /priority/);
    assert.deepEqual(await footprint(p), before);
  });

  it("refuses a $ref no earlier operation defines, a ref used twice, and per-operation request ids", async () => {
    const p = await project();
    const before = await footprint(p);
    const unknown = await p.call("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "A" } },
        { tool: "arbeit_task_create", args: { title: "B", parent_id: "$later" } },
        { tool: "arbeit_task_create", args: { title: "C" }, ref: "later" },
      ],
    });
    assert.equal(unknown.success, false);
    if (!unknown.success) {
      assert.equal(unknown.error.code, "INVALID_ARGUMENT");
      assert.match(unknown.error.message, /Operation 1 names \$later, which no earlier operation defines/);
    }
    const twice = await p.call("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "A" }, ref: "a" },
        { tool: "arbeit_task_create", args: { title: "B" }, ref: "a" },
      ],
    });
    assert.equal(twice.success, false);
    const own = await p.call("arbeit_batch", {
      operations: [{ tool: "arbeit_task_create", args: { title: "A", request_id: "inner" } }],
    });
    assert.equal(own.success, false);
    if (!own.success) assert.match(own.error.message, /no request_id or session of its own/);
    assert.deepEqual(await footprint(p), before);
  });

  it("takes only writes, and at most 100 operations", async () => {
    const p = await project();
    const read = await p.call("arbeit_batch", { operations: [{ tool: "arbeit_query", args: { query: "ready" } }] });
    assert.equal(read.success, false);
    const many = Array.from({ length: 101 }, (_, i) => ({ tool: "arbeit_task_create", args: { title: `T${i}` } }));
    const tooMany = await p.call("arbeit_batch", { operations: many });
    assert.equal(tooMany.success, false);
    const hundred = await p.ok("arbeit_batch", { operations: many.slice(0, 100) });
    assert.equal(hundred.results.length, 100);
  });

  it("a replay of the batch's request_id returns the first answer and writes nothing; a failed batch can be retried", async () => {
    const p = await project();
    const operations = [
      { tool: "arbeit_task_create", args: { title: "Once" }, ref: "t" },
      { tool: "arbeit_progress_add", args: { task_id: "$t", items: ["Step"] } },
    ];
    const first = await p.call("arbeit_batch", { operations, request_id: "plan-1" });
    assert.equal(first.success, true);
    const after = await footprint(p);
    const again = await p.call("arbeit_batch", { operations, request_id: "plan-1" });
    assert.deepEqual(again, first);
    assert.deepEqual(await footprint(p), after);

    const failing = [
      { tool: "arbeit_task_create", args: { title: "Twice?" }, ref: "t" },
      { tool: "arbeit_task_delete", args: { task_id: "tkt-00000000" } },
    ];
    assert.equal((await p.call("arbeit_batch", { operations: failing, request_id: "plan-2" })).success, false);
    assert.deepEqual(await footprint(p), after);
    // Nothing of the failed call was kept, its request id included: the corrected call runs.
    const fixed = await p.ok("arbeit_batch", { operations: failing.slice(0, 1), request_id: "plan-2" });
    assert.equal(fixed.results[0].data.task.title, "Twice?");
    assert.equal((await footprint(p)).tasks.length, after.tasks.length + 1);
  });

  it("prefixes each operation's warnings with its index", async () => {
    const p = await project();
    const data = await p.call("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "Parent" }, ref: "parent" },
        { tool: "arbeit_task_create", args: { title: "Child", parent_id: "$parent" } },
        { tool: "arbeit_task_update", args: { task_id: "$parent", status: "cancelled" } },
      ],
    });
    assert.equal(data.success, true);
    assert.ok((data.warnings ?? []).every((warning: any) => /^Operation \d+: /.test(warning.message)));
  });

  it("runs from the CLI on a file or standard input, exit 1 and nothing written on a failure", async () => {
    const p = await project();
    const ops = [
      { tool: "arbeit_task_create", args: { title: "From stdin" }, ref: "t" },
      { tool: "arbeit_context_add", args: { task_id: "$t", type: "note", content: "via the CLI" } },
    ];
    const ok = await p.cli(["batch", "-", "--json"], { input: JSON.stringify(ops) });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.json.data.results.length, 2);
    const before = await footprint(p);
    const bad = await p.cli(["batch", "-", "--json"], {
      input: JSON.stringify({
        operations: [...ops, { tool: "arbeit_task_stop_work", args: { task_id: "tkt-00000000" } }],
      }),
    });
    assert.equal(bad.code, 1);
    assert.equal(bad.json.error.details.operation_index, 2);
    assert.deepEqual(await footprint(p), before);
    const usage = await p.cli(["batch"]);
    assert.equal(usage.code, 2);
  });
});
