import assert from "node:assert/strict";
import { it } from "node:test";
import { ids, type StoreFactory, suite, useStore } from "./harness.js";

/** The hierarchy (parent, children, ancestors, descendants, depth) and blocks edges with cycles. */
export function graphContract(factory: StoreFactory): void {
  suite("hierarchy", () => {
    const p = useStore(factory);

    async function tree() {
      const root = await p().task("root");
      const a = await p().task("a", { parent_id: root, priority: 1 });
      const b = await p().task("b", { parent_id: root, priority: 0 });
      const a1 = await p().task("a1", { parent_id: a });
      const a1x = await p().task("a1x", { parent_id: a1 });
      return { root, a, b, a1, a1x };
    }

    it("reads parent_id, children (best first), ancestors (nearest first) and descendants by depth", async () => {
      const t = await tree();
      assert.equal((await p().ok("arbeit_task_get", { task_id: t.a1 })).task.parent_id, t.a);
      const children = await p().ok("arbeit_query", { query: "children_of", params: { task_id: t.root } });
      assert.deepEqual(ids(children.tasks), [t.b, t.a]);
      const ancestors = await p().ok("arbeit_query", { query: "ancestors_of", params: { task_id: t.a1x } });
      assert.deepEqual(ids(ancestors.tasks), [t.a1, t.a, t.root]);
      const descendants = await p().ok("arbeit_query", { query: "descendants_of", params: { task_id: t.root } });
      assert.deepEqual(
        descendants.tasks.map((d: { id: string; depth: number }) => [d.id, d.depth]),
        [
          [t.b, 1],
          [t.a, 1],
          [t.a1, 2],
          [t.a1x, 3],
        ],
      );
      assert.equal(descendants.has_more, false);
      const limited = await p().ok("arbeit_query", { query: "descendants_of", params: { task_id: t.root, limit: 2 } });
      assert.deepEqual(ids(limited.tasks), [t.b, t.a]);
      assert.equal(limited.has_more, true);
      const roots = await p().ok("arbeit_query", { query: "tasks", params: { parent_id: null } });
      assert.deepEqual(ids(roots.tasks), [t.root]);
      const under = await p().ok("arbeit_query", { query: "tasks", params: { parent_id: t.a } });
      assert.deepEqual(ids(under.tasks), [t.a1]);
    });

    it("measures level and subtree height through StoreTx", async () => {
      const t = await tree();
      const [levelRoot, levelLeaf, heightRoot, heightLeaf] = await p().read(async (tx) => [
        await tx.level(t.root),
        await tx.level(t.a1x),
        await tx.subtreeHeight(t.root),
        await tx.subtreeHeight(t.a1x),
      ]);
      assert.deepEqual([levelRoot, levelLeaf, heightRoot, heightLeaf], [1, 4, 4, 1]);
    });

    it("reads the ids of a task's live children and of the tasks it blocks, and nothing else", async () => {
      const t = await tree();
      const blocker = await p().task("blocker");
      const blocked = await p().task("blocked", { blocked_by: [t.a] });
      const unblocked = await p().task("unblocked", { blocked_by: [t.a] });
      const deleted = await p().task("deleted", { blocked_by: [t.a] });
      await p().ok("arbeit_task_update", { task_id: t.a, blocked_by: [blocker] });
      await p().ok("arbeit_task_update", { task_id: unblocked, blocked_by: [] });
      await p().ok("arbeit_task_delete", { task_id: deleted });
      const below = await p().read((tx) => tx.childAndDependantIds(t.a));
      assert.deepEqual([...below].sort(), [t.a1, blocked].sort());
      assert.deepEqual(await p().read((tx) => tx.childAndDependantIds(t.a1x)), []);
    });

    it("allows at most four levels and one parent, and rejects hierarchy cycles", async () => {
      const t = await tree();
      assert.equal(
        (await p().fail("arbeit_task_create", { title: "5th", parent_id: t.a1x })).code,
        "MAX_DEPTH_EXCEEDED",
      );
      const other = await p().task("other");
      const second = await p().fail("arbeit_relationship", {
        action: "add",
        from_task_id: other,
        to_task_id: t.a,
        type: "parent_of",
      });
      assert.equal(second.code, "RELATIONSHIP_EXISTS");
      const cycle = await p().fail("arbeit_task_update", { task_id: t.root, parent_id: t.b });
      assert.equal(cycle.code, "CIRCULAR_DEPENDENCY");
      assert.equal(
        (await p().fail("arbeit_task_create", { title: "x", parent_id: "tkt-zzzzzzzz" })).code,
        "PARENT_NOT_FOUND",
      );
    });

    it("re-parents and detaches through update, bumping the child's version", async () => {
      const t = await tree();
      const moved = (await p().ok("arbeit_task_update", { task_id: t.a1, parent_id: t.b })).task;
      assert.equal(moved.parent_id, t.b);
      assert.equal(moved.version, 2);
      assert.deepEqual(ids((await p().ok("arbeit_query", { query: "children_of", params: { task_id: t.b } })).tasks), [
        t.a1,
      ]);
      const detached = (await p().ok("arbeit_task_update", { task_id: t.a1, parent_id: null })).task;
      assert.equal(detached.parent_id, null);
      const ancestors = await p().ok("arbeit_query", { query: "ancestors_of", params: { task_id: t.a1x } });
      assert.deepEqual(ids(ancestors.tasks), [t.a1]);
    });
  });

  suite("blocks", () => {
    const p = useStore(factory);

    it("derives blocked from unfinished blockers, lists blocked_by in id order", async () => {
      const blockers = [await p().task("b1"), await p().task("b2"), await p().task("b3")];
      const id = await p().task("target", { blocked_by: [blockers[2], blockers[0], blockers[1]] });
      let task = (await p().ok("arbeit_task_get", { task_id: id })).task;
      assert.deepEqual(task.blocked_by, [...blockers].sort());
      assert.equal(task.blocked, true);
      await p().ok("arbeit_task_update", { task_id: blockers[0], status: "completed" });
      await p().ok("arbeit_task_update", { task_id: blockers[1], status: "cancelled" });
      assert.equal((await p().ok("arbeit_task_get", { task_id: id })).task.blocked, true);
      await p().ok("arbeit_task_update", { task_id: blockers[2], status: "in_progress" });
      assert.equal((await p().ok("arbeit_task_get", { task_id: id })).task.blocked, true);
      await p().ok("arbeit_task_update", { task_id: blockers[2], status: "completed" });
      task = (await p().ok("arbeit_task_get", { task_id: id })).task;
      assert.equal(task.blocked, false);
      assert.deepEqual(task.blocked_by, [...blockers].sort(), "finished blockers stay listed");
    });

    it("rejects cycles of any length, self-blocking, duplicates and unknown blockers", async () => {
      const a = await p().task("a");
      const b = await p().task("b", { blocked_by: [a] });
      const c = await p().task("c", { blocked_by: [b] });
      const rel = (from: string, to: string, type = "blocks") =>
        p().fail("arbeit_relationship", { action: "add", from_task_id: from, to_task_id: to, type });
      assert.equal((await rel(c, a)).code, "CIRCULAR_DEPENDENCY");
      assert.equal((await rel(b, a)).code, "CIRCULAR_DEPENDENCY");
      assert.equal((await rel(a, c, "blocked_by")).code, "CIRCULAR_DEPENDENCY");
      assert.equal((await rel(a, a)).code, "CIRCULAR_DEPENDENCY");
      assert.equal((await rel(a, b)).code, "RELATIONSHIP_EXISTS");
      assert.equal((await p().fail("arbeit_task_update", { task_id: a, blocked_by: [c] })).code, "CIRCULAR_DEPENDENCY");
      assert.equal((await p().fail("arbeit_task_update", { task_id: a, blocked_by: [a] })).code, "INVALID_BLOCKER");
      assert.equal(
        (await p().fail("arbeit_task_update", { task_id: c, blocked_by: [a, a] })).code,
        "DUPLICATE_BLOCKERS",
      );
      assert.equal(
        (await p().fail("arbeit_task_update", { task_id: c, blocked_by: ["tkt-zzzzzzzz"] })).code,
        "BLOCKER_NOT_FOUND",
      );
      const reach = await p().read(async (tx) => [await tx.reaches(a, c, "blocks"), await tx.reaches(c, a, "blocks")]);
      assert.deepEqual(reach, [true, false]);
    });

    it("a path through a deleted task is no path", async () => {
      const a = await p().task("a");
      const mid = await p().task("mid", { blocked_by: [a] });
      const c = await p().task("c", { blocked_by: [mid] });
      await p().ok("arbeit_task_delete", { task_id: mid });
      await p().ok("arbeit_relationship", { action: "add", from_task_id: c, to_task_id: a, type: "blocks" });
    });

    it("adds and removes edges by any name, normalised, and moves the blocked task's version", async () => {
      const a = await p().task("a");
      const b = await p().task("b");
      const added = await p().ok("arbeit_relationship", {
        action: "add",
        from_task_id: b,
        to_task_id: a,
        type: "blocked_by",
        metadata: { why: "needs the API" },
      });
      assert.equal(added.relationship.from_task_id, a);
      assert.equal(added.relationship.to_task_id, b);
      assert.equal(added.relationship.type, "blocks");
      assert.deepEqual(added.relationship.metadata, { why: "needs the API" });
      const briefing = await p().ok("arbeit_task_get", { task_id: b, include: ["relationships", "blocked_by"] });
      assert.equal(briefing.task.version, 2);
      assert.deepEqual(ids(briefing.blocked_by), [a]);
      assert.deepEqual(
        briefing.relationships.map((r: { id: string; other_deleted: boolean; metadata: unknown }) => [
          r.id,
          r.other_deleted,
          r.metadata,
        ]),
        [[added.relationship.id, false, { why: "needs the API" }]],
      );
      assert.deepEqual(
        await p().ok("arbeit_relationship", { action: "remove", from_task_id: a, to_task_id: b, type: "blocks" }),
        { removed: true },
      );
      assert.deepEqual(
        await p().ok("arbeit_relationship", { action: "remove", from_task_id: a, to_task_id: b, type: "blocks" }),
        { removed: false },
      );
      const after = (await p().ok("arbeit_task_get", { task_id: b })).task;
      assert.deepEqual(after.blocked_by, []);
      assert.equal(after.version, 3);
    });

    it("lists relationships in both directions, oldest first", async () => {
      const a = await p().task("a");
      const b = await p().task("b");
      const c = await p().task("c");
      p().clock.advance(1000);
      await p().ok("arbeit_relationship", { action: "add", from_task_id: b, to_task_id: a, type: "splits_from" });
      p().clock.advance(1000);
      await p().ok("arbeit_relationship", { action: "add", from_task_id: a, to_task_id: c, type: "duplicates" });
      p().clock.advance(1000);
      await p().ok("arbeit_relationship", { action: "add", from_task_id: a, to_task_id: b, type: "blocks" });
      const rows = await p().read((tx) => tx.relationshipsOf(a));
      assert.deepEqual(
        rows.map((r) => [r.from_task_id, r.type, r.to_task_id]),
        [
          [b, "splits_from", a],
          [a, "duplicates", c],
          [a, "blocks", b],
        ],
      );
    });

    it("answers blocked_tasks and blocking_tasks", async () => {
      const a = await p().task("a", { priority: 1 });
      const b = await p().task("b", { blocked_by: [a] });
      const c = await p().task("c", { blocked_by: [a], priority: 0 });
      const d = await p().task("d");
      await p().ok("arbeit_task_update", { task_id: c, status: "cancelled" });
      const blocked = await p().ok("arbeit_query", { query: "blocked_tasks" });
      assert.deepEqual(ids(blocked.tasks), [c, b]);
      const open = await p().ok("arbeit_query", { query: "blocked_tasks", params: { status: "open" } });
      assert.deepEqual(ids(open.tasks), [b]);
      const blocking = await p().ok("arbeit_query", { query: "blocking_tasks" });
      assert.deepEqual(ids(blocking.tasks), [a]);
      assert.ok(!ids(blocking.tasks).includes(d));
      const direct = await p().read(async (tx) => [ids(await tx.blockers(b)), ids(await tx.blocking(a))]);
      assert.deepEqual(direct, [[a], [c, b]]);
    });
  });
}
