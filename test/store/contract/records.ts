import assert from "node:assert/strict";
import { it } from "node:test";
import { alice, bob, ids, type StoreFactory, suite, useStore } from "./harness.js";

const DAY = 86_400_000;

/** Context (supersede chains), progress, sessions and files, the event log, activity queries. */
export function recordsContract(factory: StoreFactory): void {
  suite("context", () => {
    const p = useStore(factory);

    it("keeps entries in order and supersedes along a chain, inheriting metadata", async () => {
      const id = await p().task("t");
      const add = (content: string, extra: Record<string, unknown> = {}) =>
        p().ok("arbeit_context_add", { task_id: id, type: "decision", content, ...extra });
      const first = (await add("use REST", { metadata: { source: "meeting", n: 1 } })).entry;
      const note = (await p().ok("arbeit_context_add", { task_id: id, type: "note", content: "n" })).entry;
      assert.deepEqual(first.metadata, { source: "meeting", n: 1 });
      assert.equal(first.superseded_by, null);
      const second = await add("use GraphQL", { supersede_entry_id: first.id });
      assert.equal(second.superseded.id, first.id);
      assert.equal(second.superseded.superseded_by, second.entry.id);
      assert.deepEqual(second.entry.metadata, { source: "meeting", n: 1 });
      const third = await add("use gRPC", { supersede_entry_id: second.entry.id, metadata: { source: "rfc" } });
      assert.deepEqual(third.entry.metadata, { source: "rfc" });
      const again = await p().fail("arbeit_context_add", {
        task_id: id,
        type: "decision",
        content: "x",
        supersede_entry_id: first.id,
      });
      assert.equal(again.code, "ALREADY_SUPERSEDED");
      const briefing = await p().ok("arbeit_task_get", { task_id: id, include: ["context", "context_all"] });
      assert.deepEqual(ids(briefing.context), [note.id, third.entry.id]);
      assert.deepEqual(ids(briefing.context_all), [first.id, note.id, second.entry.id, third.entry.id]);
      assert.deepEqual(
        briefing.context_all.map((c: { superseded_by: string | null }) => c.superseded_by),
        [second.entry.id, null, third.entry.id, null],
      );
      assert.deepEqual(await p().read((tx) => tx.getContext(first.id)), briefing.context_all[0]);
    });

    it("stores metadata as given: nesting, Unicode, escapes and NUL inside JSON strings", async () => {
      const id = await p().task("t");
      const metadata = { nested: { list: [1, 2.5, null, true] }, text: 'ü 😀 \u0000 "q" \\', "key with space": "" };
      const entry = (await p().ok("arbeit_context_add", { task_id: id, type: "reference", content: "c", metadata }))
        .entry;
      assert.deepEqual(entry.metadata, metadata);
      assert.deepEqual((await p().read((tx) => tx.getContext(entry.id)))?.metadata, metadata);
    });

    it("warns about stale context after seven days", async () => {
      const id = await p().task("t");
      await p().ok("arbeit_context_add", { task_id: id, type: "note", content: "old" });
      p().clock.advance(8 * DAY);
      const got = await p().call("arbeit_task_get", { task_id: id });
      assert.deepEqual(
        got.warnings?.map((w) => w.code),
        ["STALE_CONTEXT"],
      );
    });
  });

  suite("progress", () => {
    const p = useStore(factory);

    it("adds steps in order, completes some, summarises", async () => {
      const id = await p().task("t");
      const added = await p().ok("arbeit_progress_add", { task_id: id, items: ["one", "two", "three"] });
      const [one, two, three] = added.items;
      assert.deepEqual(
        added.items.map((i: { content: string; completed: boolean }) => [i.content, i.completed]),
        [
          ["one", false],
          ["two", false],
          ["three", false],
        ],
      );
      p().clock.advance(1000);
      const done = await p().ok("arbeit_progress_complete", { item_ids: [three.id, one.id] });
      assert.deepEqual(
        done.completed.map((i: { id: string; completed_at: string }) => [i.id, i.completed_at]),
        [
          [three.id, "2026-01-01T00:00:01.000Z"],
          [one.id, "2026-01-01T00:00:01.000Z"],
        ],
      );
      const briefing = await p().ok("arbeit_task_get", { task_id: id, include: ["progress", "progress_summary"] });
      assert.deepEqual(ids(briefing.progress), [one.id, two.id, three.id]);
      assert.deepEqual(briefing.progress_summary, {
        total: 3,
        completed: 2,
        remaining: 1,
        percent: 67,
        remaining_items: [{ id: two.id, content: "two" }],
      });
      const items = await p().read((tx) => tx.getProgressItems([two.id, one.id]));
      assert.deepEqual(items.map((i) => i.id).sort(), [one.id, two.id].sort());
      const already = await p().ok("arbeit_progress_add", { task_id: id, items: ["four"], completed: true });
      assert.equal(already.items[0].completed, true);
      assert.equal(already.items[0].completed_at, "2026-01-01T00:00:01.000Z");
    });

    it("reports recent activity newest first, within a list", async () => {
      const a = await p().task("a");
      const b = await p().task("b", { list_id: "other" });
      await p().ok("arbeit_context_add", { task_id: a, type: "note", content: "old note" });
      p().clock.advance(2 * DAY);
      await p().ok("arbeit_context_add", { task_id: a, type: "note", content: "n1" });
      await p().ok("arbeit_context_add", { task_id: a, type: "note", content: "n2" });
      await p().ok("arbeit_context_add", { task_id: b, type: "note", content: "other list" });
      const [step] = (await p().ok("arbeit_progress_add", { task_id: a, items: ["s1"] })).items;
      p().clock.advance(1000);
      await p().ok("arbeit_progress_add", { task_id: a, items: ["s2"] });
      p().clock.advance(1000);
      await p().ok("arbeit_progress_complete", { item_ids: [step.id] });
      const recent = await p().ok("arbeit_query", {
        query: "recent_activity",
        params: { since: "24h", list_id: "default" },
      });
      assert.deepEqual(
        recent.context.map((c: { content: string }) => c.content),
        ["n2", "n1"],
      );
      assert.deepEqual(
        recent.progress.map((i: { content: string }) => i.content),
        ["s1", "s2"],
      );
      const forTask = await p().ok("arbeit_query", { query: "recent_activity", params: { since: "7d", task_id: b } });
      assert.deepEqual(
        forTask.context.map((c: { content: string }) => c.content),
        ["other list"],
      );
    });
  });

  suite("work sessions and files", () => {
    const p = useStore(factory);

    it("links sessions, records each file once, and answers files_for_task / tasks_for_file", async () => {
      const id = await p().task("t");
      const other = await p().task("other");
      const started = await p().ok("arbeit_task_start_work", { task_id: id }, alice);
      assert.equal(started.session_linked, true);
      const svc = p().service;
      const track = (path: string, operation: "read" | "write", caller = alice) =>
        svc.trackFile({ path, operation }, caller);
      assert.equal((await track(`${p().root}/src/a.ts`, "read")).data.tracked, true);
      p().clock.advance(1000);
      assert.equal((await track("src/a.ts", "write")).data.tracked, true);
      assert.equal((await track("src/a.ts", "write")).data.reason, "already_tracked");
      assert.equal((await track("/elsewhere/x.ts", "read")).data.reason, "outside_project");
      p().clock.advance(1000);
      assert.equal((await track("README.md", "read")).data.tracked, true);
      assert.equal((await track("src/a.ts", "read", bob)).data.reason, "no_active_work");
      await p().ok("arbeit_task_start_work", { task_id: other }, bob);
      p().clock.advance(1000);
      await track("src/a.ts", "read", bob);
      assert.equal(await p().read((tx) => tx.countFiles(id, "ses-alice", "2026-01-01T00:00:00.000Z")), 2);
      const files = await p().ok("arbeit_query", { query: "files_for_task", params: { task_id: id } });
      assert.deepEqual(files.files, [
        { file_path: "README.md", operations: ["read"], sessions: 1, last_at: "2026-01-01T00:00:02.000Z" },
        { file_path: "src/a.ts", operations: ["read", "write"], sessions: 1, last_at: "2026-01-01T00:00:01.000Z" },
      ]);
      const byFile = await p().ok("arbeit_query", { query: "tasks_for_file", params: { file_path: "src/a.ts" } });
      assert.deepEqual(
        byFile.tasks.map((t: { id: string; operations: string[]; last_at: string }) => [t.id, t.operations, t.last_at]),
        [
          [other, ["read"], "2026-01-01T00:00:03.000Z"],
          [id, ["read", "write"], "2026-01-01T00:00:01.000Z"],
        ],
      );
      const stopped = await p().ok("arbeit_task_stop_work", { task_id: id }, alice);
      assert.deepEqual([stopped.stopped, stopped.files_tracked], [true, 2]);
      assert.equal((await track("src/b.ts", "write")).data.reason, "no_active_work");
      await p().ok("arbeit_task_start_work", { task_id: id }, { ...alice, session: "ses-alice-2" });
      const sessions = (await p().ok("arbeit_task_get", { task_id: id, include: ["sessions"] })).sessions;
      assert.deepEqual(
        sessions.map((s: { session_id: string; agent: string }) => [s.session_id, s.agent]),
        [
          ["ses-alice", "alice"],
          ["ses-alice-2", "alice"],
        ],
      );
    });

    it("remembers the task a session last worked on", async () => {
      const a = await p().task("a");
      const b = await p().task("b");
      assert.equal(await p().service.sessionTask("ses-alice"), undefined);
      await p().ok("arbeit_task_start_work", { task_id: a }, alice);
      assert.deepEqual(await p().service.sessionTask("ses-alice"), { task_id: a, active: true });
      await p().ok("arbeit_task_stop_work", { task_id: a }, alice);
      p().clock.advance(1000);
      await p().ok("arbeit_task_start_work", { task_id: b }, alice);
      await p().ok("arbeit_task_stop_work", { task_id: b }, alice);
      assert.deepEqual(await p().service.sessionTask("ses-alice"), { task_id: b, active: false });
      await p().ok("arbeit_task_start_work", { task_id: a }, alice);
      await p().ok("arbeit_task_stop_work", { task_id: a }, alice);
      assert.equal(await p().read((tx) => tx.lastWorkedTask("ses-alice")), a, "same time: the later start wins");
      await p().ok("arbeit_task_delete", { task_id: a });
      assert.equal(await p().read((tx) => tx.lastWorkedTask("ses-alice")), b);
    });

    it("refuses a second active task in one session (ALREADY_WORKING)", async () => {
      const a = await p().task("a");
      const b = await p().task("b");
      await p().ok("arbeit_task_start_work", { task_id: a }, alice);
      assert.equal((await p().fail("arbeit_task_start_work", { task_id: b }, alice)).code, "ALREADY_WORKING");
      const active = await p().read((tx) => tx.activeWork("ses-alice"));
      assert.deepEqual(active, {
        session_id: "ses-alice",
        task_id: a,
        agent: "alice",
        started_at: "2026-01-01T00:00:00.000Z",
      });
    });
  });

  suite("events", () => {
    const p = useStore(factory);

    it("pages through the log by cursor, in seq order, filtered by task and type", async () => {
      const a = await p().task("a");
      const b = await p().task("b");
      for (let i = 0; i < 5; i++) await p().ok("arbeit_task_update", { task_id: a, priority: i % 5 });
      await p().ok("arbeit_context_add", { task_id: b, type: "note", content: "x" });
      const all = (await p().ok("arbeit_query", { query: "events", params: { limit: 1000 } })).events;
      assert.equal(all.length, 8);
      const seqs = all.map((e: { seq: number }) => e.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((x: number, y: number) => x - y),
      );
      assert.equal(new Set(seqs).size, seqs.length);
      assert.ok(seqs.every((s: number) => Number.isInteger(s) && s > 0));
      const paged: unknown[] = [];
      let after = 0;
      for (;;) {
        const page = await p().ok("arbeit_query", { query: "events", params: { after_seq: after, limit: 3 } });
        paged.push(...page.events);
        after = page.next_after_seq;
        if (!page.has_more) break;
      }
      assert.deepEqual(paged, all);
      const empty = await p().ok("arbeit_query", { query: "events", params: { after_seq: after } });
      assert.deepEqual([empty.events, empty.next_after_seq, empty.has_more], [[], after, false]);
      assert.equal(await p().lastSeq(), after);
      const forB = await p().ok("arbeit_query", { query: "events", params: { task_id: b } });
      assert.deepEqual(
        forB.events.map((e: { event_type: string }) => e.event_type),
        ["task_created", "context_added"],
      );
      const typed = await p().ok("arbeit_query", { query: "events", params: { event_types: ["task_created"] } });
      assert.deepEqual(
        typed.events.map((e: { task_id: string }) => e.task_id),
        [a, b],
      );
      const first = all[0];
      assert.equal(first.agent, "alice");
      assert.equal(first.session_id, "ses-alice");
      assert.equal(first.timestamp, "2026-01-01T00:00:00.000Z");
      assert.equal(first.payload.task.id, a);
      const recent = (await p().ok("arbeit_task_get", { task_id: a, include: ["recent_events"] })).recent_events;
      assert.deepEqual(
        recent,
        all.filter((e: { task_id: string }) => e.task_id === a),
      );
      const window = await p().read((tx) => tx.eventsForTasks([a, b], all[2].seq, 2));
      assert.equal(window.total, 5);
      assert.deepEqual(window.events, all.slice(-2));
      assert.deepEqual(await p().read((tx) => tx.recentEvents(a, 2)), all.slice(5, 7));
    });

    it("finds stale tasks by their last activity", async () => {
      const quiet = await p().task("quiet");
      const busy = await p().task("busy");
      await p().task("done", { status: "completed" });
      p().clock.advance(10 * DAY);
      await p().ok("arbeit_context_add", { task_id: busy, type: "note", content: "still here" });
      const stale = await p().ok("arbeit_query", { query: "stale_tasks", params: { days: 7 } });
      assert.deepEqual(ids(stale.tasks), [quiet]);
    });
  });
}
