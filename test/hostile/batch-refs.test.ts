import assert from "node:assert/strict";
import { it } from "node:test";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * In a batch, "$<ref>" names an earlier operation's new id only in fields that hold ids (task_id,
 * parent_id, blocked_by, supersede_entry_id, item_ids, from_task_id, to_task_id, a task memory's
 * scope_id). Every other string (title, content, plan, metadata, memory values) is kept exactly as
 * written, "$HOME" and "$a" included, even when a ref of that name exists.
 */

async function batch(p: HostileProject, operations: unknown[]) {
  return p.cli(["batch", "-"], { input: JSON.stringify(operations) });
}

forEachEngine("arbeit_batch references", (project) => {
  it("takes $-words in text literally: a title $HOME, content $a beside a ref named a, metadata and memory values", async () => {
    const p = await project();
    const result = await batch(p, [
      { tool: "arbeit_task_create", args: { title: "$HOME", description: "$a", plan: "$PATH" }, ref: "a" },
      {
        tool: "arbeit_context_add",
        args: { task_id: "$a", type: "note", content: "$a", metadata: { ref: "$a", list: ["$a"] } },
      },
      { tool: "arbeit_memory", args: { action: "set", key: "$a", value: "$a" } },
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const [created, entry, memory] = result.json.data.results.map((r: { data: unknown }) => r.data);
    assert.equal(created.task.title, "$HOME");
    assert.equal(created.task.description, "$a");
    assert.equal(created.task.plan, "$PATH");
    assert.equal(entry.entry.task_id, created.task.id, "task_id is an id field: $a is the new task");
    assert.equal(entry.entry.content, "$a");
    assert.deepEqual(entry.entry.metadata, { ref: "$a", list: ["$a"] });
    assert.equal(memory.entry.key, "$a");
    assert.equal(memory.entry.value, "$a");
  });

  it("resolves refs in every id field: parent_id, blocked_by, task_id, supersede_entry_id, item_ids, from/to, scope_id", async () => {
    const p = await project();
    const result = await batch(p, [
      { tool: "arbeit_task_create", args: { title: "Epic" }, ref: "epic" },
      { tool: "arbeit_task_create", args: { title: "First", parent_id: "$epic" }, ref: "first" },
      {
        tool: "arbeit_task_create",
        args: { title: "Second", parent_id: "$epic", blocked_by: ["$first"] },
        ref: "second",
      },
      { tool: "arbeit_task_create", args: { title: "Loose" }, ref: "loose" },
      {
        tool: "arbeit_task_update",
        args: { task_id: "$loose", parent_id: "$epic", blocked_by: ["$first", "$second"] },
      },
      { tool: "arbeit_context_add", args: { task_id: "$first", type: "decision", content: "v1" }, ref: "d1" },
      {
        tool: "arbeit_context_add",
        args: { task_id: "$first", type: "decision", content: "v2", supersede_entry_id: "$d1" },
      },
      { tool: "arbeit_progress_add", args: { task_id: "$first", items: ["Only step"] }, ref: "step" },
      { tool: "arbeit_progress_complete", args: { item_ids: ["$step"] } },
      {
        tool: "arbeit_relationship",
        args: { action: "add", from_task_id: "$loose", type: "relates_to", to_task_id: "$first" },
      },
      { tool: "arbeit_memory", args: { action: "set", scope: "task", scope_id: "$second", key: "note", value: 1 } },
      { tool: "arbeit_task_claim", args: { task_id: "$second", lease_seconds: 60 } },
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const data = result.json.data.results.map((r: { data: any }) => r.data);
    const [epic, first, second, loose] = data.slice(0, 4).map((d: any) => d.task.id);
    assert.equal(data[1].task.parent_id, epic);
    assert.deepEqual(data[2].task.blocked_by, [first]);
    assert.equal(data[4].task.id, loose);
    assert.equal(data[4].task.parent_id, epic);
    assert.deepEqual([...data[4].task.blocked_by].sort(), [first, second].sort());
    assert.equal(data[6].superseded.id, data[5].entry.id);
    const step = data[7].items[0].id;
    assert.deepEqual(
      data[8].completed.map((item: any) => [item.id, item.completed]),
      [[step, true]],
    );
    // relates_to has no direction: its ends may be stored either way round.
    const ends = [data[9].relationship.from_task_id, data[9].relationship.to_task_id];
    assert.deepEqual(ends.sort(), [loose, first].sort());
    assert.equal(data[10].entry.scope_id, second);
    assert.equal(data[11].task.id, second);

    assert.equal(data[6].superseded.superseded_by, data[6].entry.id);
  });

  it("a $word in an id field that names no earlier ref is INVALID_ARGUMENT naming it, and nothing is written", async () => {
    const p = await project();
    for (const args of [
      { title: "Child", parent_id: "$HOME" },
      { title: "Child", blocked_by: ["$nope"] },
    ]) {
      const result = await batch(p, [
        { tool: "arbeit_task_create", args: { title: "Kept back" }, ref: "a" },
        { tool: "arbeit_task_create", args },
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.json.error.code, "INVALID_ARGUMENT");
      assert.match(result.json.error.message, /Operation 1 names \$(HOME|nope), which no earlier operation defines/);
      assert.equal(result.json.error.details.operation_index, 1);
    }
    assert.deepEqual((await p.ok("arbeit_query", { query: "tasks" })).tasks, []);
  });
});
