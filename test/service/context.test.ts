import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CONTEXT_TYPES } from "../../src/domain/types.js";
import type { TestProject } from "../helpers/service.js";
import { createTask, createTasks, expectCallError, useProject } from "./helpers.js";

/** arbeit_context_add: immutable entries, replaced only by superseding. */

function addContext(p: TestProject, taskId: string, fields: Record<string, unknown> = {}): Promise<any> {
  return p.ok("arbeit_context_add", { task_id: taskId, type: "note", content: "c", ...fields });
}

/** Arguments of a context_add that supersedes `entryId`. */
function superseding(taskId: string, entryId: string): Record<string, unknown> {
  return { task_id: taskId, type: "note", content: "c", supersede_entry_id: entryId };
}

async function contextOf(p: TestProject, taskId: string, all = false): Promise<any[]> {
  const section = all ? "context_all" : "context";
  return (await p.ok("arbeit_task_get", { task_id: taskId, include: [section] }))[section];
}

describe("arbeit_context_add", () => {
  const project = useProject();

  for (const type of CONTEXT_TYPES) {
    it(`records a ${type} entry`, async () => {
      const p = project();
      const task = await createTask(p, "t");
      const { entry } = await addContext(p, task.id, { type, content: `a ${type}` });
      assert.match(entry.id, /^ctx-[a-z0-9]{8}$/);
      assert.equal(entry.task_id, task.id);
      assert.equal(entry.type, type);
      assert.equal(entry.content, `a ${type}`);
      assert.equal(entry.superseded_by, null);
      assert.equal(entry.created_at, p.clock.current.toISOString());
    });
  }

  it("stores metadata as given, and null when none is given", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const meta = { source: "docs", links: ["a", "b"], nested: { n: 1 } };
    assert.deepEqual((await addContext(p, task.id, { metadata: meta })).entry.metadata, meta);
    assert.equal((await addContext(p, task.id)).entry.metadata, null);
  });

  it("lists entries oldest first", async () => {
    const p = project();
    const task = await createTask(p, "t");
    for (const content of ["one", "two", "three"]) await addContext(p, task.id, { content });
    assert.deepEqual(
      (await contextOf(p, task.id)).map((entry) => entry.content),
      ["one", "two", "three"],
    );
  });

  it("refuses an unknown context type (INVALID_TYPE)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_context_add", { task_id: task.id, type: "idea", content: "c" }, "INVALID_TYPE");
  });

  it("refuses an unknown task (TASK_NOT_FOUND)", async () => {
    await expectCallError(
      project(),
      "arbeit_context_add",
      { task_id: "tkt-zzzzzzzz", type: "note", content: "c" },
      "TASK_NOT_FOUND",
    );
  });

  it("refuses empty or whitespace-only content (INVALID_ARGUMENT)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    for (const content of ["", "   "]) {
      await expectCallError(p, "arbeit_context_add", { task_id: task.id, type: "note", content }, "INVALID_ARGUMENT");
    }
  });

  it("refuses metadata that is an array or a string (INVALID_METADATA)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    for (const metadata of [["a"], "text", 3]) {
      await expectCallError(
        p,
        "arbeit_context_add",
        { task_id: task.id, type: "note", content: "c", metadata },
        "INVALID_METADATA",
      );
    }
  });
});

describe("superseding context", () => {
  const project = useProject();

  it("marks the old entry superseded by the new one and returns both", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const old = (await addContext(p, task.id, { type: "blocker", content: "waiting" })).entry;
    const data = await addContext(p, task.id, { type: "blocker", content: "resolved", supersede_entry_id: old.id });
    assert.equal(data.superseded.id, old.id);
    assert.equal(data.superseded.superseded_by, data.entry.id);
    assert.equal(data.entry.superseded_by, null);
  });

  it("keeps superseded entries out of context but in context_all", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const old = (await addContext(p, task.id, { content: "old" })).entry;
    await addContext(p, task.id, { content: "new", supersede_entry_id: old.id });
    assert.deepEqual(
      (await contextOf(p, task.id)).map((entry) => entry.content),
      ["new"],
    );
    assert.deepEqual(
      (await contextOf(p, task.id, true)).map((entry) => [entry.content, entry.superseded_by !== null]),
      [
        ["old", true],
        ["new", false],
      ],
    );
  });

  it("follows a chain: A superseded by B, B superseded by C", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const a = (await addContext(p, task.id, { content: "A" })).entry;
    const b = (await addContext(p, task.id, { content: "B", supersede_entry_id: a.id })).entry;
    const c = (await addContext(p, task.id, { content: "C", supersede_entry_id: b.id })).entry;
    const all = await contextOf(p, task.id, true);
    assert.deepEqual(
      all.map((entry) => [entry.id, entry.superseded_by]),
      [
        [a.id, b.id],
        [b.id, c.id],
        [c.id, null],
      ],
    );
    assert.deepEqual(
      (await contextOf(p, task.id)).map((entry) => entry.id),
      [c.id],
    );
  });

  it("refuses superseding an entry twice (ALREADY_SUPERSEDED), pointing at the newer entry", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const a = (await addContext(p, task.id, { content: "A" })).entry;
    const b = (await addContext(p, task.id, { content: "B", supersede_entry_id: a.id })).entry;
    const error = await expectCallError(p, "arbeit_context_add", superseding(task.id, a.id), "ALREADY_SUPERSEDED");
    assert.equal(error.details?.superseded_by, b.id);
  });

  it("inherits the old entry's metadata when none is given", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const a = (await addContext(p, task.id, { metadata: { source: "rfc" } })).entry;
    const b = (await addContext(p, task.id, { supersede_entry_id: a.id })).entry;
    const c = (await addContext(p, task.id, { supersede_entry_id: b.id })).entry;
    assert.deepEqual(b.metadata, { source: "rfc" });
    assert.deepEqual(c.metadata, { source: "rfc" }, "inherited along the chain");
  });

  it("uses given metadata instead of inheriting", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const a = (await addContext(p, task.id, { metadata: { source: "rfc" } })).entry;
    const b = (await addContext(p, task.id, { supersede_entry_id: a.id, metadata: { source: "user" } })).entry;
    assert.deepEqual(b.metadata, { source: "user" });
  });

  it("may change the entry type when superseding", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const a = (await addContext(p, task.id, { type: "attempt" })).entry;
    const b = (await addContext(p, task.id, { type: "outcome", supersede_entry_id: a.id })).entry;
    assert.equal(b.type, "outcome");
  });

  it("refuses an unknown entry (ENTRY_NOT_FOUND)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_context_add", superseding(task.id, "ctx-zzzzzzzz"), "ENTRY_NOT_FOUND");
  });

  it("refuses an entry of another task (ENTRY_NOT_FOUND) and leaves it live", async () => {
    const p = project();
    const [mine, theirs] = await createTasks(p, "mine", "theirs");
    const foreign = (await addContext(p, theirs!.id)).entry;
    await expectCallError(p, "arbeit_context_add", superseding(mine!.id, foreign.id), "ENTRY_NOT_FOUND");
    assert.equal((await contextOf(p, theirs!.id))[0].superseded_by, null);
  });

  it("refuses a malformed entry id (INVALID_ID)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_context_add", superseding(task.id, "entry-5"), "INVALID_ID");
  });
});
