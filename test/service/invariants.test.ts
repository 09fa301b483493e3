import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createChain,
  createTask,
  createTasks,
  expectCallError,
  expectError,
  getTask,
  relate,
  relateOk,
  updateTask,
  useProject,
} from "./helpers.js";

/** The graph invariants (one parent, at most 4 levels, no cycles), whichever tool writes the edge. */

describe("hierarchy depth (at most 4 levels)", () => {
  const project = useProject();

  it("allows a task at level 4", async () => {
    const chain = await createChain(project(), 4);
    assert.equal(chain[3]!.parent_id, chain[2]!.id);
  });

  it("refuses a create below level 4 (MAX_DEPTH_EXCEEDED)", async () => {
    const p = project();
    const chain = await createChain(p, 4);
    const error = await expectCallError(
      p,
      "arbeit_task_create",
      { title: "level 5", parent_id: chain[3]!.id },
      "MAX_DEPTH_EXCEEDED",
    );
    assert.equal(error.details?.max_depth, 4);
  });

  it("refuses re-parenting a subtree when its deepest task would pass level 4", async () => {
    const p = project();
    const target = await createChain(p, 2, "target");
    const subtree = await createChain(p, 3, "subtree");
    await expectCallError(
      p,
      "arbeit_task_update",
      { task_id: subtree[0]!.id, parent_id: target[1]!.id },
      "MAX_DEPTH_EXCEEDED",
    );
    assert.equal((await getTask(p, subtree[0]!.id)).parent_id, null);
  });

  it("allows re-parenting a subtree that still fits", async () => {
    const p = project();
    const target = await createTask(p, "target");
    const subtree = await createChain(p, 3, "subtree");
    assert.equal((await updateTask(p, subtree[0]!.id, { parent_id: target.id })).task.parent_id, target.id);
  });

  it("applies the limit to parent_of edges added through arbeit_relationship", async () => {
    const p = project();
    const target = await createChain(p, 3, "target");
    const subtree = await createChain(p, 2, "subtree");
    expectError(await relate(p, "add", target[2]!.id, "parent_of", subtree[0]!.id), "MAX_DEPTH_EXCEEDED");
    expectError(await relate(p, "add", subtree[0]!.id, "child_of", target[2]!.id), "MAX_DEPTH_EXCEEDED");
  });

  it("ignores deleted descendants when measuring a subtree", async () => {
    const p = project();
    const target = await createChain(p, 3, "target");
    const moved = await createTask(p, "moved");
    const gone = await createTask(p, "gone", { parent_id: moved.id });
    await p.ok("arbeit_task_delete", { task_id: gone.id });
    assert.equal((await updateTask(p, moved.id, { parent_id: target[2]!.id })).task.parent_id, target[2]!.id);
  });
});

describe("parents", () => {
  const project = useProject();

  it("refuses an unknown parent on create and update (PARENT_NOT_FOUND)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_create", { title: "t", parent_id: "tkt-zzzzzzzz" }, "PARENT_NOT_FOUND");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, parent_id: "tkt-zzzzzzzz" }, "PARENT_NOT_FOUND");
  });

  it("refuses a deleted parent (PARENT_NOT_FOUND)", async () => {
    const p = project();
    const [gone, task] = await createTasks(p, "gone", "task");
    await p.ok("arbeit_task_delete", { task_id: gone!.id });
    await expectCallError(p, "arbeit_task_update", { task_id: task!.id, parent_id: gone!.id }, "PARENT_NOT_FOUND");
  });

  it("refuses a second parent through arbeit_relationship (RELATIONSHIP_EXISTS)", async () => {
    const p = project();
    const [first, second] = await createTasks(p, "first", "second");
    const child = await createTask(p, "child", { parent_id: first!.id });
    expectError(await relate(p, "add", second!.id, "parent_of", child.id), "RELATIONSHIP_EXISTS");
    assert.equal((await getTask(p, child.id)).parent_id, first!.id);
  });
});

describe("hierarchy cycles", () => {
  const project = useProject();

  it("refuses making a task its own parent", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, parent_id: task.id }, "CIRCULAR_DEPENDENCY");
    expectError(await relate(p, "add", task.id, "parent_of", task.id), "CIRCULAR_DEPENDENCY");
  });

  it("refuses moving a task under its own descendant via parent_id", async () => {
    const p = project();
    const chain = await createChain(p, 3);
    await expectCallError(
      p,
      "arbeit_task_update",
      { task_id: chain[0]!.id, parent_id: chain[2]!.id },
      "CIRCULAR_DEPENDENCY",
    );
  });

  it("refuses a parent_of edge from a descendant to its ancestor", async () => {
    const p = project();
    const chain = await createChain(p, 2);
    const root = await createTask(p, "top");
    await updateTask(p, chain[0]!.id, { parent_id: root.id });
    const error = expectError(await relate(p, "add", chain[1]!.id, "parent_of", root.id), "CIRCULAR_DEPENDENCY");
    assert.equal(error.details?.type, "parent_of");
  });
});

describe("blocking cycles", () => {
  const project = useProject();

  it("refuses a task blocking itself through arbeit_relationship", async () => {
    const p = project();
    const task = await createTask(p, "t");
    expectError(await relate(p, "add", task.id, "blocks", task.id), "CIRCULAR_DEPENDENCY");
  });

  it("refuses a two-task cycle", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    await updateTask(p, b!.id, { blocked_by: [a!.id] });
    await expectCallError(p, "arbeit_task_update", { task_id: a!.id, blocked_by: [b!.id] }, "CIRCULAR_DEPENDENCY");
    expectError(await relate(p, "add", b!.id, "blocks", a!.id), "CIRCULAR_DEPENDENCY");
    expectError(await relate(p, "add", a!.id, "blocked_by", b!.id), "CIRCULAR_DEPENDENCY");
  });

  it("refuses closing a long chain", async () => {
    const p = project();
    const tasks = await createTasks(p, "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8");
    for (let i = 1; i < tasks.length; i++) {
      await relateOk(p, "add", tasks[i - 1]!.id, "blocks", tasks[i]!.id);
    }
    const error = expectError(await relate(p, "add", tasks.at(-1)!.id, "blocks", tasks[0]!.id), "CIRCULAR_DEPENDENCY");
    assert.equal(error.details?.type, "blocks");
    await expectCallError(
      p,
      "arbeit_task_update",
      { task_id: tasks[0]!.id, blocked_by: [tasks.at(-1)!.id] },
      "CIRCULAR_DEPENDENCY",
    );
  });

  it("allows diamonds, which are not cycles", async () => {
    const p = project();
    const [top, left, right] = await createTasks(p, "top", "left", "right");
    await updateTask(p, left!.id, { blocked_by: [top!.id] });
    await updateTask(p, right!.id, { blocked_by: [top!.id] });
    const bottom = await createTask(p, "bottom", { blocked_by: [left!.id, right!.id] });
    assert.deepEqual([...bottom.blocked_by].sort(), [left!.id, right!.id].sort());
  });

  it("does not count a path through a deleted task as a cycle", async () => {
    const p = project();
    const a = await createTask(p, "a");
    const gone = await createTask(p, "gone", { blocked_by: [a.id] });
    const b = await createTask(p, "b", { blocked_by: [gone.id] });
    await p.ok("arbeit_task_delete", { task_id: gone.id });
    assert.deepEqual((await updateTask(p, a.id, { blocked_by: [b.id] })).task.blocked_by, [b.id]);
  });
});

describe("blocked_by lists", () => {
  const project = useProject();

  it("refuses unknown blockers on create and update (BLOCKER_NOT_FOUND), naming them", async () => {
    const p = project();
    const [a, task] = await createTasks(p, "a", "task");
    const error = await expectCallError(
      p,
      "arbeit_task_create",
      { title: "t", blocked_by: [a!.id, "tkt-zzzzzzzz"] },
      "BLOCKER_NOT_FOUND",
    );
    assert.deepEqual(error.details?.missing, ["tkt-zzzzzzzz"]);
    await expectCallError(
      p,
      "arbeit_task_update",
      { task_id: task!.id, blocked_by: ["tkt-zzzzzzzz"] },
      "BLOCKER_NOT_FOUND",
    );
  });

  it("refuses deleted blockers (BLOCKER_NOT_FOUND)", async () => {
    const p = project();
    const [gone, task] = await createTasks(p, "gone", "task");
    await p.ok("arbeit_task_delete", { task_id: gone!.id });
    await expectCallError(p, "arbeit_task_update", { task_id: task!.id, blocked_by: [gone!.id] }, "BLOCKER_NOT_FOUND");
  });

  it("refuses a task in its own blocked_by (INVALID_BLOCKER)", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, blocked_by: [task.id] }, "INVALID_BLOCKER");
  });

  it("refuses the same blocker twice (DUPLICATE_BLOCKERS)", async () => {
    const p = project();
    const [a, task] = await createTasks(p, "a", "task");
    await expectCallError(p, "arbeit_task_create", { title: "t", blocked_by: [a!.id, a!.id] }, "DUPLICATE_BLOCKERS");
    await expectCallError(
      p,
      "arbeit_task_update",
      { task_id: task!.id, blocked_by: [a!.id, a!.id] },
      "DUPLICATE_BLOCKERS",
    );
  });
});

describe("derived blocked flag", () => {
  const project = useProject();

  it("is true while a blocker is open or in progress and false once it is completed or cancelled", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    const task = await createTask(p, "task", { blocked_by: [a!.id, b!.id] });
    assert.equal(task.blocked, true);
    await updateTask(p, a!.id, { status: "in_progress" });
    assert.equal((await getTask(p, task.id)).blocked, true);
    await updateTask(p, a!.id, { status: "completed" });
    assert.equal((await getTask(p, task.id)).blocked, true);
    await updateTask(p, b!.id, { status: "cancelled" });
    const after = await getTask(p, task.id);
    assert.equal(after.blocked, false);
    assert.equal(after.blocked_by.length, 2, "finished blockers stay listed");
  });
});
