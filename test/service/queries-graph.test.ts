import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createChain, createTask, expectQueryError, query, queryIds, useProject } from "./helpers.js";

/** arbeit_query hierarchy queries: children_of, descendants_of (with depth), ancestors_of. */

describe("query children_of", () => {
  const project = useProject();

  it("lists direct children only", async () => {
    const p = project();
    const [root, child] = await createChain(p, 3);
    const sibling = await createTask(p, "sibling", { parent_id: root!.id });
    assert.deepEqual((await queryIds(p, "children_of", { task_id: root!.id })).sort(), [child!.id, sibling.id].sort());
  });

  it("answers an empty list for a leaf", async () => {
    const p = project();
    const chain = await createChain(p, 2);
    assert.deepEqual(await queryIds(p, "children_of", { task_id: chain[1]!.id }), []);
  });

  it("refuses an unknown task (TASK_NOT_FOUND) and a missing task_id (INVALID_ARGUMENT)", async () => {
    const p = project();
    await expectQueryError(p, "children_of", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND");
    await expectQueryError(p, "children_of", undefined, "INVALID_ARGUMENT");
  });
});

describe("query descendants_of", () => {
  const project = useProject();

  it("lists every descendant with its depth below the task, shallowest first", async () => {
    const p = project();
    const chain = await createChain(p, 4);
    p.clock.advance(1000);
    const side = await createTask(p, "side", { parent_id: chain[0]!.id });
    const { tasks, has_more } = await query(p, "descendants_of", { task_id: chain[0]!.id });
    assert.deepEqual(
      tasks.map((t: any) => [t.id, t.depth]),
      [
        [chain[1]!.id, 1],
        [side.id, 1],
        [chain[2]!.id, 2],
        [chain[3]!.id, 3],
      ],
    );
    assert.equal(has_more, false);
  });

  it("pages with limit", async () => {
    const p = project();
    const chain = await createChain(p, 4);
    const { tasks, has_more } = await query(p, "descendants_of", { task_id: chain[0]!.id, limit: 2 });
    assert.equal(tasks.length, 2);
    assert.equal(has_more, true);
  });
});

describe("query ancestors_of", () => {
  const project = useProject();

  it("lists ancestors nearest first", async () => {
    const p = project();
    const chain = await createChain(p, 4);
    assert.deepEqual(await queryIds(p, "ancestors_of", { task_id: chain[3]!.id }), [
      chain[2]!.id,
      chain[1]!.id,
      chain[0]!.id,
    ]);
  });

  it("answers an empty list for a root", async () => {
    const p = project();
    const root = await createTask(p, "root");
    assert.deepEqual(await queryIds(p, "ancestors_of", { task_id: root.id }), []);
  });
});
