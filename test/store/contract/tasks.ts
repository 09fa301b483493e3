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
        metadata: { jira: "PAY-12", points: 3, labels: ["auth"], estimate: { hours: 4 } },
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
          blocks: [],
          blocked: false,
          priority: 1,
          owner: "alice",
          lease_expires_at: null,
          claim_session: null,
          active_form: "Fixing login",
          risk: "high",
          impact: "medium",
          metadata: { jira: "PAY-12", points: 3, labels: ["auth"], estimate: { hours: 4 } },
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

    it("merges metadata on update: given keys are set, a key given as null is removed, none left is null", async () => {
      const id = await p().task("Pay", { metadata: { jira: "PAY-1", points: 3, gone: null } });
      const get = async () => (await p().ok("arbeit_task_get", { task_id: id })).task;
      assert.deepEqual((await get()).metadata, { jira: "PAY-1", points: 3 }, "null on create sets nothing");
      const merged = (
        await p().ok("arbeit_task_update", { task_id: id, metadata: { points: 5, jira: null, team: "web" } })
      ).task;
      assert.deepEqual(merged.metadata, { points: 5, team: "web" });
      assert.equal(merged.version, 2);
      assert.deepEqual(await get(), merged);
      const same = (await p().ok("arbeit_task_update", { task_id: id, metadata: { points: 5 } })).task;
      assert.equal(same.version, 2, "metadata that changes nothing writes nothing");
      const events = (await p().ok("arbeit_query", { query: "events", params: { task_id: id } })).events;
      assert.deepEqual(events[1].payload.changes.metadata, {
        from: { jira: "PAY-1", points: 3 },
        to: { points: 5, team: "web" },
      });
      const cleared = (await p().ok("arbeit_task_update", { task_id: id, metadata: { points: null, team: null } }))
        .task;
      assert.equal(cleared.metadata, null);
      assert.equal((await get()).metadata, null);
      assert.equal(
        (await p().ok("arbeit_task_create", { title: "Plain" })).task.metadata,
        null,
        "a task without metadata has null",
      );
    });

    it("refuses metadata that is no object, too deep or too large, and writes nothing", async () => {
      const id = await p().task("Pay", { metadata: { big: "x".repeat(10_000) } });
      const before = await p().lastSeq();
      assert.equal((await p().fail("arbeit_task_create", { title: "x", metadata: ["a"] })).code, "INVALID_METADATA");
      assert.equal((await p().fail("arbeit_task_create", { title: "x", metadata: "a" })).code, "INVALID_METADATA");
      let deep: unknown = 1;
      for (let i = 0; i < 40; i++) deep = { d: deep };
      assert.equal((await p().fail("arbeit_task_create", { title: "x", metadata: deep })).code, "FIELD_TOO_LARGE");
      assert.equal(
        (await p().fail("arbeit_task_create", { title: "x", metadata: { big: "x".repeat(20_000) } })).code,
        "FIELD_TOO_LARGE",
      );
      const merged = await p().fail("arbeit_task_update", { task_id: id, metadata: { more: "y".repeat(10_000) } });
      assert.equal(merged.code, "FIELD_TOO_LARGE", "each call fits, the merged object does not");
      assert.equal(await p().lastSeq(), before);
      assert.deepEqual((await p().ok("arbeit_task_get", { task_id: id })).task.metadata, { big: "x".repeat(10_000) });
    });

    it("filters the tasks query by metadata: every key with its value, of the same JSON type", async () => {
      const a = await p().task("A", { metadata: { jira: "PAY-1", points: 3, urgent: true, 'odd "key"': "v" } });
      const b = await p().task("B", { metadata: { jira: "PAY-2", points: 3.5, urgent: false } });
      const c = await p().task("C", { metadata: { jira: "PAY-1", points: "3", nested: { urgent: true } } });
      const d = await p().task("D");
      const ids = async (metadata: unknown) =>
        (await p().ok("arbeit_query", { query: "tasks", params: { metadata } })).tasks
          .map((t: { id: string }) => t.id)
          .sort();
      assert.deepEqual(await ids({ jira: "PAY-1" }), [a, c].sort());
      assert.deepEqual(await ids({ jira: "PAY-1", points: 3 }), [a], "a number matches no string");
      assert.deepEqual(await ids({ points: "3" }), [c]);
      assert.deepEqual(await ids({ points: 3.5 }), [b]);
      assert.deepEqual(await ids({ urgent: true }), [a], "a key nested deeper is not matched");
      assert.deepEqual(await ids({ urgent: false }), [b]);
      assert.deepEqual(await ids({ 'odd "key"': "v" }), [a]);
      assert.deepEqual(await ids({ jira: "PAY-9" }), []);
      assert.deepEqual(await ids({}), [a, b, c, d].sort(), "no keys: no filter");
      const bad = await p().fail("arbeit_query", { query: "tasks", params: { metadata: { labels: ["auth"] } } });
      assert.equal(bad.code, "INVALID_METADATA");
    });

    it("a filter value also matches a list at that key holding it (labels), of the same JSON type", async () => {
      const ui = await p().task("UI bug", { metadata: { labels: ["ui", "bug"], ids: [7, 8], flags: [true] } });
      const api = await p().task("API", { metadata: { labels: ["api"], ids: ["7"] } });
      const one = await p().task("One label", { metadata: { labels: "ui" } });
      await p().task("Nested", { metadata: { labels: [["ui"]], more: { labels: ["ui"] } } });
      const ids = async (metadata: unknown) =>
        (await p().ok("arbeit_query", { query: "tasks", params: { metadata } })).tasks
          .map((t: { id: string }) => t.id)
          .sort();
      assert.deepEqual(await ids({ labels: "ui" }), [ui, one].sort(), "a list holding it, or the value itself");
      assert.deepEqual(await ids({ labels: "ui", ids: 7 }), [ui], "every key must match");
      assert.deepEqual(await ids({ ids: "7" }), [api], "a number in a list matches no string");
      assert.deepEqual(await ids({ flags: true }), [ui]);
      assert.deepEqual(await ids({ labels: "u" }), [], "an item matches whole, not a part of it");
    });

    it("lists the live tasks a task blocks (blocks), in id order, as blocked_by lists its blockers", async () => {
      const blocker = await p().task("Schema");
      const first = await p().task("API", { blocked_by: [blocker] });
      const second = await p().task("UI", { blocked_by: [blocker] });
      const get = async (id: string) => (await p().ok("arbeit_task_get", { task_id: id })).task;
      assert.deepEqual((await get(blocker)).blocks, [first, second].sort());
      assert.deepEqual((await get(first)).blocked_by, [blocker]);
      assert.deepEqual((await get(first)).blocks, []);
      await p().ok("arbeit_task_update", { task_id: blocker, status: "completed" });
      assert.deepEqual((await get(blocker)).blocks, [first, second].sort(), "finished blockers still list them");
      await p().ok("arbeit_task_delete", { task_id: second });
      assert.deepEqual((await get(blocker)).blocks, [first], "a deleted task is not listed");
      await p().ok("arbeit_task_update", { task_id: first, blocked_by: [] });
      assert.deepEqual((await get(blocker)).blocks, []);
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
