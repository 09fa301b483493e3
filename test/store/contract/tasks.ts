import assert from "node:assert/strict";
import { it } from "node:test";
import { alice, bob, ids, type StoreFactory, suite, useStore } from "./harness.js";

const T0 = "2026-01-01T00:00:00.000Z";

/** Create, read, update and (soft) delete tasks; listings and their order. */
export function taskContract(factory: StoreFactory): void {
  suite("tasks", () => {
    const p = useStore(factory);

    it("creates a task with every field and reads it back unchanged", async () => {
      const created = await p().ok("arbeit_task_create", {
        title: "Fix login",
        type: "bug",
        intent: "Users are locked out",
        description: "Session cookie expires early",
        plan: "Plan:\n- Changes:\n  - extend TTL",
        priority: 1,
        owner: "alice",
        active_form: "Fixing login",
        list_id: "web",
        risk: "high",
        impact: "medium",
      });
      const task = created.task;
      assert.match(task.id, /^tkt-[a-z0-9]{8}$/);
      assert.deepEqual(
        { ...task, id: "x" },
        {
          id: "x",
          list_id: "web",
          title: "Fix login",
          type: "bug",
          status: "open",
          intent: "Users are locked out",
          description: "Session cookie expires early",
          plan: "Plan:\n- Changes:\n  - extend TTL",
          parent_id: null,
          blocked_by: [],
          blocked: false,
          priority: 1,
          owner: "alice",
          lease_expires_at: null,
          claim_session: null,
          active_form: "Fixing login",
          risk: "high",
          impact: "medium",
          version: 1,
          created_at: T0,
          updated_at: T0,
        },
      );
      assert.deepEqual((await p().ok("arbeit_task_get", { task_id: task.id })).task, task);
    });

    it("stores text verbatim: quotes, placeholders, backslashes, newlines and any Unicode", async () => {
      const title = `It's "quoted" ? $1 %_ \\ 'x'; DROP TABLE tasks; -- ünïcödé 日本語 😀`;
      const description = "line 1\nline 2\r\n\ttabbed ? ?? $2 {x}";
      const id = await p().task(title, { description });
      const task = (await p().ok("arbeit_task_get", { task_id: id })).task;
      assert.equal(task.title, title);
      assert.equal(task.description, description);
    });

    it("requires a title and names bad enums with their own codes", async () => {
      assert.equal((await p().fail("arbeit_task_create", { title: "" })).code, "TITLE_REQUIRED");
      assert.equal((await p().fail("arbeit_task_create", { title: "x", status: "done" })).code, "INVALID_STATUS");
    });

    it("updates fields, bumps the version once per change and logs what changed", async () => {
      const id = await p().task("Draft");
      p().clock.advance(1000);
      const updated = (await p().ok("arbeit_task_update", { task_id: id, title: "Final", priority: 0 })).task;
      assert.equal(updated.title, "Final");
      assert.equal(updated.priority, 0);
      assert.equal(updated.version, 2);
      assert.equal(updated.updated_at, "2026-01-01T00:00:01.000Z");
      assert.equal(updated.created_at, T0);
      const same = (await p().ok("arbeit_task_update", { task_id: id, title: "Final" })).task;
      assert.equal(same.version, 2, "an update that changes nothing writes nothing");
      const events = (await p().ok("arbeit_query", { query: "events", params: { task_id: id } })).events;
      assert.deepEqual(
        events.map((e: { event_type: string }) => e.event_type),
        ["task_created", "task_updated"],
      );
      assert.deepEqual(events[1].payload.changes.title, { from: "Draft", to: "Final" });
    });

    it("keeps intent immutable once set", async () => {
      const id = await p().task("T", { intent: "why" });
      assert.equal((await p().fail("arbeit_task_update", { task_id: id, intent: "other" })).code, "INTENT_IMMUTABLE");
    });

    it("rejects a stale expected_version with VERSION_CONFLICT carrying the current version", async () => {
      const id = await p().task("T");
      await p().ok("arbeit_task_update", { task_id: id, title: "T2", expected_version: 1 });
      const conflict = await p().fail("arbeit_task_update", { task_id: id, title: "T3", expected_version: 1 });
      assert.equal(conflict.code, "VERSION_CONFLICT");
      assert.equal(conflict.details.current_version, 2);
      assert.equal(
        (await p().fail("arbeit_task_delete", { task_id: id, expected_version: 1 })).code,
        "VERSION_CONFLICT",
      );
      assert.equal((await p().ok("arbeit_task_get", { task_id: id })).task.title, "T2");
    });

    it("soft-deletes: the task vanishes from every read but its events stay", async () => {
      const keep = await p().task("Keep");
      const gone = await p().task("Gone", { blocked_by: [keep] });
      const blocked = await p().task("Blocked", { blocked_by: [gone] });
      assert.deepEqual(await p().ok("arbeit_task_delete", { task_id: gone }), { deleted: true });
      assert.equal((await p().fail("arbeit_task_get", { task_id: gone })).code, "TASK_NOT_FOUND");
      assert.equal((await p().fail("arbeit_task_update", { task_id: gone, title: "x" })).code, "TASK_NOT_FOUND");
      const listed = (await p().ok("arbeit_query", { query: "tasks" })).tasks;
      assert.deepEqual(ids(listed).sort(), [keep, blocked].sort());
      const after = await p().call("arbeit_task_get", { task_id: blocked });
      assert.ok(after.success);
      assert.deepEqual(after.data.task.blocked_by, [], "a deleted blocker no longer blocks");
      assert.equal(after.data.task.blocked, false);
      assert.deepEqual(
        after.warnings?.map((w) => w.code),
        ["ORPHAN_RELATIONSHIPS"],
      );
      const exists = await p().read((tx) => tx.taskExists(gone));
      assert.deepEqual(exists, { exists: true, deleted: true });
      const events = (await p().ok("arbeit_query", { query: "events", params: { task_id: gone } })).events;
      assert.equal(events.at(-1).event_type, "task_deleted");
    });

    it("refuses to delete a task with live children (HAS_CHILDREN)", async () => {
      const parent = await p().task("Parent");
      const child = await p().task("Child", { parent_id: parent });
      const error = await p().fail("arbeit_task_delete", { task_id: parent });
      assert.equal(error.code, "HAS_CHILDREN");
      assert.deepEqual(error.details.children, [child]);
      await p().ok("arbeit_task_delete", { task_id: child });
      await p().ok("arbeit_task_delete", { task_id: parent });
    });

    it("lists by priority, then age, then id, with filters and paging", async () => {
      const made: Record<string, string> = {};
      for (const [title, priority, extra] of [
        ["c", 2, {}],
        ["a", 0, { type: "bug" }],
        ["d", 4, { owner: "bob" }],
        ["b", 2, { status: "completed" }],
        ["e", 0, { list_id: "other" }],
      ] as const) {
        made[title] = await p().task(title, { priority, ...extra });
        p().clock.advance(1000);
      }
      const all = (await p().ok("arbeit_query", { query: "tasks" })).tasks;
      assert.deepEqual(
        all.map((t: { title: string }) => t.title),
        ["a", "e", "c", "b", "d"],
      );
      const titles = async (params: Record<string, unknown>) =>
        (await p().ok("arbeit_query", { query: "tasks", params })).tasks.map((t: { title: string }) => t.title);
      assert.deepEqual(await titles({ status: "completed" }), ["b"]);
      assert.deepEqual(await titles({ status: ["open", "completed"], list_id: "default" }), ["a", "c", "b", "d"]);
      assert.deepEqual(await titles({ type: "bug" }), ["a"]);
      assert.deepEqual(await titles({ owner: "bob" }), ["d"]);
      assert.deepEqual(await titles({ list_id: "other" }), ["e"]);
      const first = await p().ok("arbeit_query", { query: "tasks", params: { limit: 2 } });
      const page = await p().ok("arbeit_query", { query: "tasks", params: { limit: 2, cursor: first.next_cursor } });
      assert.deepEqual(
        page.tasks.map((t: { title: string }) => t.title),
        ["c", "b"],
      );
      assert.equal(page.has_more, true);
      const last = await p().ok("arbeit_query", { query: "tasks", params: { limit: 2, cursor: page.next_cursor } });
      assert.deepEqual(
        last.tasks.map((t: { title: string }) => t.title),
        ["d"],
      );
      assert.equal(last.has_more, false);
      const active = await p().ok("arbeit_query", { query: "active_tasks", params: { list_id: "default" } }, bob);
      assert.deepEqual(
        active.tasks.map((t: { title: string }) => t.title),
        ["a", "c", "d"],
      );
    });

    it("breaks ties in age by id", async () => {
      const made = [await p().task("x"), await p().task("y"), await p().task("z")];
      const listed = ids((await p().ok("arbeit_query", { query: "tasks" }, alice)).tasks);
      assert.deepEqual(listed, [...made].sort());
      assert.deepEqual(ids(await p().read((tx) => tx.getTasks([...made].reverse()))), [...made].sort());
    });
  });
}
