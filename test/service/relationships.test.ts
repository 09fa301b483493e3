import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import { createTasks, expectError, getTask, relate, relateOk, useProject } from "./helpers.js";

/** arbeit_relationship: five types, four inverse names, add and remove. */

async function pair(p: TestProject): Promise<[string, string]> {
  const [a, b] = await createTasks(p, "a", "b");
  return [a!.id, b!.id];
}

async function relationshipsOf(p: TestProject, taskId: string): Promise<any[]> {
  return (await p.ok("arbeit_task_get", { task_id: taskId, include: ["relationships"] })).relationships;
}

describe("arbeit_relationship add", () => {
  const project = useProject();

  const CANONICAL: Array<[string, string]> = [
    ["parent_of", "parent_of"],
    ["blocks", "blocks"],
    ["duplicates", "duplicates"],
    ["splits_from", "splits_from"],
    ["child_of", "parent_of"],
    ["blocked_by", "blocks"],
    ["duplicated_by", "duplicates"],
    ["split_into", "splits_from"],
  ];
  for (const [given, stored] of CANONICAL) {
    const swapped = given !== stored;
    it(`adds ${given} as ${stored}${swapped ? " with the ends swapped" : " with the ends as given"}`, async () => {
      const p = project();
      const [a, b] = await pair(p);
      const rel = (await relateOk(p, "add", a, given, b, { metadata: { reason: "r" } })).relationship;
      assert.match(rel.id, /^rel-[a-z0-9]{8}$/);
      assert.equal(rel.type, stored);
      assert.deepEqual([rel.from_task_id, rel.to_task_id], swapped ? [b, a] : [a, b]);
      assert.deepEqual(rel.metadata, { reason: "r" });
      assert.deepEqual(
        (await relationshipsOf(p, a)).map((r) => r.id),
        [rel.id],
      );
    });
  }

  it("stores relates_to once, whichever end is named first", async () => {
    const p = project();
    const [a, b] = await pair(p);
    const rel = (await relateOk(p, "add", a, "relates_to", b)).relationship;
    assert.deepEqual([rel.from_task_id, rel.to_task_id].sort(), [a, b].sort());
    expectError(await relate(p, "add", b, "relates_to", a), "RELATIONSHIP_EXISTS");
    expectError(await relate(p, "add", a, "relates_to", b), "RELATIONSHIP_EXISTS");
  });

  it("treats an inverse name and its canonical form as the same edge (RELATIONSHIP_EXISTS)", async () => {
    const p = project();
    const [a, b] = await pair(p);
    await relateOk(p, "add", a, "blocks", b);
    expectError(await relate(p, "add", b, "blocked_by", a), "RELATIONSHIP_EXISTS");
    await relateOk(p, "add", a, "duplicated_by", b);
    expectError(await relate(p, "add", b, "duplicates", a), "RELATIONSHIP_EXISTS");
  });

  it("allows different types between the same two tasks", async () => {
    const p = project();
    const [a, b] = await pair(p);
    for (const type of ["relates_to", "duplicates", "splits_from", "blocks", "parent_of"]) {
      await relateOk(p, "add", a, type, b);
    }
    assert.equal((await relationshipsOf(p, a)).length, 5);
  });

  it("shows parent_of and blocks edges on the task's own parent_id and blocked_by", async () => {
    const p = project();
    const [a, b] = await pair(p);
    await relateOk(p, "add", b, "child_of", a);
    await relateOk(p, "add", b, "blocked_by", a);
    const task = await getTask(p, b);
    assert.equal(task.parent_id, a);
    assert.deepEqual(task.blocked_by, [a]);
  });

  it("refuses an unknown relationship type (INVALID_TYPE)", async () => {
    const p = project();
    const [a, b] = await pair(p);
    expectError(await relate(p, "add", a, "depends_on", b), "INVALID_TYPE");
  });

  it("refuses an unknown or deleted task at either end (TASK_NOT_FOUND)", async () => {
    const p = project();
    const [a, b] = await pair(p);
    expectError(await relate(p, "add", a, "relates_to", "tkt-zzzzzzzz"), "TASK_NOT_FOUND");
    expectError(await relate(p, "add", "tkt-zzzzzzzz", "blocks", a), "TASK_NOT_FOUND");
    await p.ok("arbeit_task_delete", { task_id: b });
    expectError(await relate(p, "add", a, "duplicates", b), "TASK_NOT_FOUND");
  });

  it("refuses relating a task to itself with a soft type (INVALID_ARGUMENT)", async () => {
    const p = project();
    const [a] = await pair(p);
    expectError(await relate(p, "add", a, "relates_to", a), "INVALID_ARGUMENT");
  });

  it("refuses metadata that is not an object (INVALID_METADATA)", async () => {
    const p = project();
    const [a, b] = await pair(p);
    expectError(await relate(p, "add", a, "relates_to", b, { metadata: ["x"] }), "INVALID_METADATA");
  });

  it("refuses an unknown action (INVALID_ARGUMENT)", async () => {
    const p = project();
    const [a, b] = await pair(p);
    expectError(await relate(p, "link" as "add", a, "relates_to", b), "INVALID_ARGUMENT");
  });
});

describe("arbeit_relationship remove", () => {
  const project = useProject();

  for (const [added, removedAs] of [
    ["parent_of", "child_of"],
    ["blocks", "blocked_by"],
    ["duplicates", "duplicated_by"],
    ["splits_from", "split_into"],
    ["relates_to", "relates_to"],
  ] as const) {
    it(`removes ${added} when named ${removedAs} from the other end`, async () => {
      const p = project();
      const [a, b] = await pair(p);
      await relateOk(p, "add", a, added, b);
      assert.deepEqual(await relateOk(p, "remove", b, removedAs, a), { removed: true });
      assert.deepEqual(await relationshipsOf(p, a), []);
    });
  }

  it("answers removed: false when there is no such relationship", async () => {
    const p = project();
    const [a, b] = await pair(p);
    assert.deepEqual(await relateOk(p, "remove", a, "blocks", b), { removed: false });
  });

  it("is TASK_NOT_FOUND naming a task that does not exist, at either end", async () => {
    const p = project();
    const [a] = await createTasks(p, "a");
    for (const [from, to] of [
      [a!.id, "tkt-zzzzzzzz"],
      ["tkt-zzzzzzzz", a!.id],
    ]) {
      const error = expectError(await relate(p, "remove", from!, "blocks", to!), "TASK_NOT_FOUND");
      assert.match(error.message, /tkt-zzzzzzzz/);
    }
  });

  it("still removes an edge to a deleted task", async () => {
    const p = project();
    const [a, b] = await pair(p);
    await relateOk(p, "add", a, "relates_to", b);
    await p.ok("arbeit_task_delete", { task_id: b });
    assert.deepEqual(await relateOk(p, "remove", a, "relates_to", b), { removed: true });
  });

  it("lets the same edge be added again after removal", async () => {
    const p = project();
    const [a, b] = await pair(p);
    await relateOk(p, "add", a, "blocks", b);
    await relateOk(p, "remove", a, "blocks", b);
    await relateOk(p, "add", a, "blocks", b);
  });

  it("clears parent_id and blocked_by on the affected task", async () => {
    const p = project();
    const [a, b] = await pair(p);
    await relateOk(p, "add", a, "parent_of", b);
    await relateOk(p, "add", a, "blocks", b);
    await relateOk(p, "remove", a, "parent_of", b);
    await relateOk(p, "remove", a, "blocks", b);
    const task = await getTask(p, b);
    assert.equal(task.parent_id, null);
    assert.deepEqual(task.blocked_by, []);
  });

  it("refuses metadata on remove (INVALID_ARGUMENT)", async () => {
    const p = project();
    const [a, b] = await pair(p);
    await relateOk(p, "add", a, "blocks", b);
    expectError(await relate(p, "remove", a, "blocks", b, { metadata: { why: "x" } }), "INVALID_ARGUMENT");
  });
});
