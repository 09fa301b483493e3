import assert from "node:assert/strict";
import { it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { LIMITS } from "../../../src/schemas/limits.js";
import { ArbeitService } from "../../../src/service/arbeit-service.js";
import { REPLAYS } from "../../multi-agent/replays.js";
import { alice, bob, type ContractProject, contractProject, type StoreFactory, suite, useStore } from "./harness.js";

/**
 * What a second run of a write would change, read through StoreTx: the event log's head, every
 * live task whole (version, status, claim and lease), everything hung on each task, both test
 * sessions' cursor and focus, and the project's memory.
 */
async function footprint(p: ContractProject) {
  return p.read(async (tx) => {
    const tasks = await tx.listTasks({ limit: 1000, offset: 0 });
    const hung = [];
    for (const task of tasks)
      hung.push({
        id: task.id,
        relationships: await tx.relationshipsOf(task.id),
        context: await tx.contextOf(task.id, true),
        progress: await tx.progressOf(task.id),
        sessions: await tx.sessionsOf(task.id),
        working: await tx.workingOn(task.id),
        files: await tx.filesOf(task.id),
      });
    return {
      seq: await tx.maxEventSeq(),
      versions: tasks.map((t) => [t.id, t.version]),
      tasks,
      hung,
      sessions: [await tx.sessionState(alice.session!), await tx.sessionState(bob.session!)],
      memory: await tx.memoryList({ scopes: [{ scope: "project", scope_id: "" }], now: "", limit: 1000 }),
    };
  });
}

/** request_id replay, memory with TTL, resume with its cursor. */
export function agentContract(factory: StoreFactory): void {
  suite("idempotent replay", () => {
    const p = useStore(factory);

    for (const [what, c] of Object.entries(REPLAYS)) {
      it(`replays ${what} (${c.tool}) byte for byte and changes nothing`, async () => {
        const args = await c.setup(p());
        const first = await p().call(c.tool, { ...args, request_id: "retry" }, alice);
        assert.equal(first.success, true, JSON.stringify(first));
        await c.meanwhile?.(p(), args);
        p().clock.advance(60_000);
        const before = await footprint(p());
        const again = await p().call(c.tool, { ...args, request_id: "retry" }, alice);
        assert.equal(JSON.stringify(again), JSON.stringify(first));
        assert.deepEqual(await footprint(p()), before);
        // The case is one a second run would betray: running it again for real fails or writes.
        const rerun = await p().call(c.tool, args, alice);
        assert.ok(
          !rerun.success || !isDeepStrictEqual(await footprint(p()), before),
          `a second run of ${c.tool} here would leave no trace, so this case proves nothing`,
        );
      });
    }

    it("refuses a reused request_id for another call, keeps agents apart, forgets failures", async () => {
      await p().ok("arbeit_task_create", { title: "First", request_id: "same" }, alice);
      const other = await p().fail("arbeit_task_create", { title: "Second", request_id: "same" }, alice);
      assert.equal(other.code, "INVALID_ARGUMENT");
      const theirs = await p().ok("arbeit_task_create", { title: "First", request_id: "same" }, bob);
      assert.equal(theirs.task.title, "First");
      const failed = await p().fail("arbeit_task_create", { title: "C", parent_id: "tkt-zzzzzzzz", request_id: "r" });
      assert.equal(failed.code, "PARENT_NOT_FOUND");
      assert.equal((await p().call("arbeit_task_create", { title: "C", request_id: "r" })).success, true);
    });

    it("replays from the database through another connection", async () => {
      const first = await p().call("arbeit_task_create", { title: "Durable", request_id: "restart" }, alice);
      const peer = await p().openPeer();
      try {
        const service = new ArbeitService(peer, { projectRoot: p().root, now: p().clock.now });
        const again = await contractProject(p(), service).call(
          "arbeit_task_create",
          { title: "Durable", request_id: "restart" },
          alice,
        );
        assert.equal(JSON.stringify(again), JSON.stringify(first));
      } finally {
        await peer.close();
      }
    });
  });

  suite("memory", () => {
    const p = useStore(factory);

    it("upserts by key, keeps scopes apart, lists by prefix in key order and deletes", async () => {
      const set = (key: string, value: unknown, extra: Record<string, unknown> = {}, caller = alice) =>
        p().ok("arbeit_memory", { action: "set", key, value, ...extra }, caller);
      const first = (await set("build.cmd", "npm test")).entry;
      p().clock.advance(1000);
      const updated = (await set("build.cmd", ["npm", "run", "test"])).entry;
      assert.equal(updated.id, first.id);
      assert.equal(updated.created_at, "2026-01-01T00:00:00.000Z");
      assert.equal(updated.updated_at, "2026-01-01T00:00:01.000Z");
      assert.deepEqual(updated.value, ["npm", "run", "test"]);
      await set("build.%_literal", 1);
      await set("buildx", 2);
      await set("😀.mood", "good");
      await set("😀", "face");
      await set("build.cmd", "agent-scoped", { scope: "agent" });
      await set("build.cmd", "bob's", { scope: "agent" }, bob);
      const list = async (prefix?: string, extra: Record<string, unknown> = {}) =>
        (
          await p().ok(
            "arbeit_memory",
            { action: "list", ...(prefix === undefined ? {} : { prefix }), ...extra },
            alice,
          )
        ).entries;
      assert.deepEqual(
        (await list()).map((e: { key: string }) => e.key),
        ["build.%_literal", "build.cmd", "buildx", "😀", "😀.mood"],
      );
      assert.deepEqual(
        (await list("build.")).map((e: { key: string }) => e.key),
        ["build.%_literal", "build.cmd"],
      );
      assert.deepEqual(
        (await list("build.%")).map((e: { key: string }) => e.key),
        ["build.%_literal"],
      );
      assert.deepEqual(
        (await list("😀")).map((e: { key: string }) => e.key),
        ["😀", "😀.mood"],
      );
      assert.deepEqual(
        (await list(undefined, { scope: "agent" })).map((e: { value: unknown }) => e.value),
        ["agent-scoped"],
      );
      const get = await p().ok("arbeit_memory", { action: "get", key: "build.cmd", scope: "agent", scope_id: "bob" });
      assert.equal(get.entry.value, "bob's");
      assert.deepEqual(await p().ok("arbeit_memory", { action: "delete", key: "buildx" }), { deleted: true });
      assert.deepEqual(await p().ok("arbeit_memory", { action: "delete", key: "buildx" }), { deleted: false });
      assert.equal((await p().ok("arbeit_memory", { action: "get", key: "buildx" })).entry, null);
    });

    it("hides entries once their TTL has passed and sweeps them on the next write", async () => {
      const id = await p().task("t");
      await p().ok("arbeit_memory", { action: "set", key: "short", value: 1, ttl_seconds: 60 });
      await p().ok("arbeit_memory", { action: "set", key: "task-note", value: 2, scope: "task", scope_id: id });
      const entry = (await p().ok("arbeit_memory", { action: "get", key: "short" })).entry;
      assert.equal(entry.expires_at, "2026-01-01T00:01:00.000Z");
      p().clock.advance(59_999);
      assert.equal((await p().ok("arbeit_memory", { action: "get", key: "short" })).entry.value, 1);
      p().clock.advance(1);
      assert.equal((await p().ok("arbeit_memory", { action: "get", key: "short" })).entry, null);
      assert.deepEqual((await p().ok("arbeit_memory", { action: "list" })).entries, []);
      const swept = await p().store.write((tx) => tx.memorySweep(p().clock.now().toISOString()));
      assert.equal(swept, 1);
      const kept = await p().ok("arbeit_memory", { action: "list", scope: "task", scope_id: id });
      assert.equal(kept.entries.length, 1);
      assert.equal(
        (
          await p().fail("arbeit_memory", {
            action: "set",
            key: "k",
            value: 1,
            scope: "task",
            scope_id: "tkt-zzzzzzzz",
          })
        ).code,
        "TASK_NOT_FOUND",
      );
    });

    it("reinforces a key set again: one more each time, with the newest value and time", async () => {
      const set = (value: unknown, extra: Record<string, unknown> = {}) =>
        p().ok("arbeit_memory", { action: "set", key: "test-command", value, ...extra });
      const first = (await set("npm test")).entry;
      assert.equal(first.reinforced, 1);
      p().clock.advance(1000);
      assert.equal((await set("npm test")).entry.reinforced, 2, "the same value counts");
      p().clock.advance(1000);
      const third = (await set("npm run test:unit")).entry;
      assert.deepEqual(
        [third.id, third.reinforced, third.value, third.created_at, third.updated_at],
        [first.id, 3, "npm run test:unit", first.created_at, "2026-01-01T00:00:02.000Z"],
      );
      const listed = (await p().ok("arbeit_memory", { action: "list" })).entries[0];
      assert.equal(listed.reinforced, 3);
      assert.equal((await p().ok("arbeit_memory", { action: "get", key: "test-command" })).entry.reinforced, 3);
    });

    it("starts a key whose TTL has passed again at 1, as a new entry", async () => {
      const set = () => p().ok("arbeit_memory", { action: "set", key: "k", value: 1, ttl_seconds: 60 });
      await set();
      await set();
      p().clock.advance(60_000);
      const fresh = (await set()).entry;
      assert.equal(fresh.reinforced, 1);
      assert.equal(fresh.created_at, "2026-01-01T00:01:00.000Z");
      // Below the service's sweep, the store itself renews an expired row it still holds.
      await p().store.write((tx) =>
        tx.memoryUpsert({
          scope: "project",
          scope_id: "",
          key: "k",
          value: 2,
          expires_at: null,
          at: "2026-01-01T00:02:00.000Z",
        }),
      );
      const renewed = await p().store.write((tx) =>
        tx.memoryUpsert({
          scope: "project",
          scope_id: "",
          key: "k",
          value: 3,
          expires_at: null,
          at: "2026-01-01T00:03:00.000Z",
        }),
      );
      assert.equal(renewed.reinforced, 2);
    });

    it("gc deletes expired entries for good, everywhere or in one scope, and says how many", async () => {
      const id = await p().task("t");
      const set = (key: string, extra: Record<string, unknown> = {}) =>
        p().ok("arbeit_memory", { action: "set", key, value: key, ttl_seconds: 60, ...extra });
      await set("a");
      await set("b", { scope: "agent" });
      await set("c", { scope: "task", scope_id: id });
      await p().ok("arbeit_memory", { action: "set", key: "kept", value: 1 });
      const stored = () =>
        p().read((tx) =>
          tx.memoryList({
            scopes: [
              { scope: "project", scope_id: "" },
              { scope: "agent", scope_id: "alice" },
              { scope: "task", scope_id: id },
            ],
            now: "",
            limit: 100,
          }),
        );
      assert.deepEqual(await p().ok("arbeit_memory", { action: "gc" }), { collected: 0 }, "nothing has expired");
      p().clock.advance(60_000);
      const seq = await p().lastSeq();
      assert.deepEqual(await p().ok("arbeit_memory", { action: "gc", scope: "agent" }), { collected: 1 });
      assert.deepEqual((await stored()).map((e) => e.key).sort(), ["a", "c", "kept"]);
      assert.deepEqual(await p().ok("arbeit_memory", { action: "gc" }), { collected: 2 });
      assert.deepEqual(
        (await stored()).map((e) => e.key),
        ["kept"],
      );
      assert.equal(await p().lastSeq(), seq, "expired entries were invisible already: no event");
      const unscoped = await p().fail("arbeit_memory", { action: "gc", scope_id: "alice" });
      assert.equal(unscoped.code, "INVALID_ARGUMENT");
    });

    it(`keeps at most ${LIMITS.memory_entries} live entries per scope, evicting the weakest for a new key`, async () => {
      const cap = LIMITS.memory_entries;
      // The scope filled through the store, in one transaction: the cap is what is under test.
      await p().store.write(async (tx) => {
        for (let i = 0; i < cap; i++)
          await tx.memoryUpsert({
            scope: "project",
            scope_id: "",
            key: `k${String(i).padStart(3, "0")}`,
            value: i,
            expires_at: null,
            at: new Date(Date.parse("2026-01-01T00:00:00.000Z") + i * 1000).toISOString(),
          });
      });
      p().clock.advance(cap * 1000);
      // k000 is the oldest, but set twice; k001 is then the least reinforced, least recently set.
      await p().ok("arbeit_memory", { action: "set", key: "k000", value: 0 });
      await p().ok("arbeit_memory", { action: "set", key: "other-scope", value: 1, scope: "agent" });
      const count = () => p().read((tx) => tx.memoryCount("project", "", p().clock.now().toISOString()));
      assert.equal(await count(), cap, "setting a key that exists never evicts");

      const seq = await p().lastSeq();
      const result = await p().call("arbeit_memory", { action: "set", key: "new", value: "fresh" });
      assert.equal(result.success, true);
      const data = (result as any).data;
      assert.equal(data.entry.key, "new");
      assert.deepEqual(
        data.evicted.map((e: { key: string; value: unknown }) => [e.key, e.value]),
        [["k001", 1]],
      );
      assert.deepEqual(
        (result.warnings ?? []).map((w) => w.code),
        ["MEMORY_EVICTED"],
      );
      assert.match(result.warnings?.[0]?.message ?? "", /"k001"/);
      assert.equal(await count(), cap);
      assert.equal((await p().ok("arbeit_memory", { action: "get", key: "k001" })).entry, null);
      const events = await p().read((tx) => tx.listEvents({ after_seq: seq, limit: 10 }));
      assert.deepEqual(
        events.map((e) => [e.event_type, e.payload.key, e.payload.reason]),
        [
          ["memory_deleted", "k001", "evicted"],
          ["memory_set", "new", undefined],
        ],
      );
      // An expired entry makes room without evicting anything live.
      await p().ok("arbeit_memory", { action: "set", key: "k002", value: 2, ttl_seconds: 1 });
      p().clock.advance(1000);
      const roomy = await p().call("arbeit_memory", { action: "set", key: "newer", value: 1 });
      assert.deepEqual([roomy.warnings ?? [], (roomy as any).data.evicted], [[], undefined]);
      assert.equal(await count(), cap);
    });
  });

  suite("resume", () => {
    const p = useStore(factory);
    const focusOf = (packet: any) => [packet.focus.task?.id ?? null, packet.focus.reason];

    it("focuses on the best ready task, then the session's claim, then the task it last started", async () => {
      assert.equal((await p().ok("arbeit_resume", {}, alice)).focus.reason, "none");
      await p().task("later", { priority: 3 });
      const best = await p().task("now", { priority: 0 });
      const packet = await p().ok("arbeit_resume", {}, alice);
      assert.deepEqual([packet.focus.task.id, packet.focus.reason], [best, "best_ready"]);
      const claimed = await p().task("claimed", { priority: 4 });
      await p().ok("arbeit_task_claim", { task_id: claimed }, alice);
      assert.equal((await p().ok("arbeit_resume", {}, alice)).focus.reason, "claimed");
      await p().ok("arbeit_task_start_work", { task_id: claimed }, alice);
      await p().ok("arbeit_task_stop_work", { task_id: claimed }, alice);
      const kept = await p().ok("arbeit_resume", {}, alice);
      assert.deepEqual([kept.focus.task.id, kept.focus.reason], [claimed, "last_started"]);
    });

    it("follows start_work, keeps a focus the session works on, and never one another session holds", async () => {
      const a = await p().task("a", { priority: 0 });
      const b = await p().task("b", { priority: 1 });
      await p().ok("arbeit_task_start_work", { task_id: a }, alice);
      assert.deepEqual(focusOf(await p().ok("arbeit_resume", {}, alice)), [a, "kept_focus"]);
      await p().ok("arbeit_task_stop_work", { task_id: a }, alice);
      await p().ok("arbeit_task_start_work", { task_id: b }, alice);
      assert.deepEqual(focusOf(await p().ok("arbeit_resume", {}, alice)), [b, "kept_focus"]);
      // Another session of the same agent takes `a`: it is never alice's session's focus again.
      const other = { session: "ses-alice-2", agent: "alice" };
      await p().ok("arbeit_task_start_work", { task_id: a }, other);
      await p().ok("arbeit_task_stop_work", { task_id: b }, alice);
      await p().ok("arbeit_task_update", { task_id: b, status: "completed" }, alice);
      const packet = await p().ok("arbeit_resume", {}, alice);
      assert.notEqual(packet.focus.task?.id, a);
      assert.deepEqual(focusOf(await p().ok("arbeit_resume", {}, other)), [a, "kept_focus"]);
    });

    it("chooses a task assigned to the agent before ready work", async () => {
      await p().task("ready", { priority: 0 });
      const mine = await p().task("assigned", { priority: 4, owner: "alice" });
      assert.deepEqual(focusOf(await p().ok("arbeit_resume", {}, alice)), [mine, "assigned"]);
      // Assigned to alice, it is not ready work for bob.
      const forBob = await p().ok("arbeit_query", { query: "ready" }, bob);
      assert.ok(!forBob.tasks.some((t: { id: string }) => t.id === mine));
    });

    it("brings parent, blockers, context, progress, files and memory", async () => {
      const epic = await p().task("epic");
      const blocker = await p().task("blocker");
      const focus = await p().task("focus", { parent_id: epic, blocked_by: [blocker], priority: 0 });
      await p().ok("arbeit_task_start_work", { task_id: focus }, alice);
      await p().ok("arbeit_context_add", { task_id: focus, type: "decision", content: "Use Postgres" }, alice);
      await p().ok("arbeit_progress_add", { task_id: focus, items: ["one", "two"] }, alice);
      await p().service.trackFile({ path: `${p().root}/src/a.ts`, operation: "write" }, alice);
      await p().ok("arbeit_memory", { action: "set", scope: "task", scope_id: focus, key: "port", value: 8080 });
      await p().ok("arbeit_memory", { action: "set", scope: "agent", key: "style", value: "terse" }, alice);
      await p().ok("arbeit_memory", { action: "set", scope: "agent", key: "style", value: "chatty" }, bob);
      const packet = await p().ok("arbeit_resume", { max_tokens: 5000 }, alice);
      assert.equal(packet.focus.task.id, focus);
      assert.equal(packet.parent.id, epic);
      assert.deepEqual(
        packet.blockers.map((t: { id: string }) => t.id),
        [blocker],
      );
      assert.deepEqual(
        packet.context.map((c: { content: string }) => c.content),
        ["Use Postgres"],
      );
      assert.equal(packet.progress.total, 2);
      assert.deepEqual(
        packet.files.map((f: { file_path: string }) => f.file_path),
        ["src/a.ts"],
      );
      const memory = packet.memory.map((m: { key: string; value: unknown }) => `${m.key}=${m.value}`).sort();
      assert.deepEqual(memory, ["port=8080", "style=terse"]);
    });

    it("briefs memory most reinforced first, then most recently set, and a tight budget cuts the weakest", async () => {
      const set = async (key: string, times: number, extra: Record<string, unknown> = {}) => {
        for (let i = 0; i < times; i++)
          await p().ok("arbeit_memory", { action: "set", key, value: `${key} `.repeat(100), ...extra }, alice);
        p().clock.advance(1000);
      };
      await set("old-once", 1);
      await set("thrice", 3);
      await set("twice", 2, { scope: "agent" });
      await set("new-once", 1, { scope: "list" });
      const strongest = ["thrice", "twice", "new-once", "old-once"];
      const brief = async (max_tokens: number) =>
        (await p().ok("arbeit_resume", { peek: true, max_tokens }, alice)) as {
          memory: Array<{ key: string; reinforced: number }>;
          budget: { cut: string[] };
        };
      const full = await brief(20_000);
      assert.deepEqual(
        full.memory.map((m) => [m.key, m.reinforced]),
        [
          ["thrice", 3],
          ["twice", 2],
          ["new-once", 1],
          ["old-once", 1],
        ],
      );
      const kept: string[][] = [];
      for (let budget = 2000; budget >= 400; budget -= 50) {
        const packet = await brief(budget);
        const keys = packet.memory.map((m) => m.key);
        assert.deepEqual(keys, strongest.slice(0, keys.length), `with ${budget} tokens`);
        if (keys.length < strongest.length)
          assert.ok(packet.budget.cut.includes(`memory (${strongest.length - keys.length})`), packet.budget.cut.join());
        kept.push(keys);
      }
      assert.ok(
        kept.some((keys) => keys.length === 1),
        "some budget leaves room for the strongest entry alone",
      );
    });

    it("falls through from a list with nothing ready to the rest of the project, and says so", async () => {
      const done = await p().task("shipped", { list_id: "frontend" });
      await p().ok("arbeit_task_update", { task_id: done, status: "completed" }, alice);
      const held = await p().task("bob's", { list_id: "frontend" });
      await p().ok("arbeit_task_claim", { task_id: held }, bob);
      const elsewhere = await p().task("backend work", { list_id: "backend", priority: 1 });
      const later = await p().task("later backend work", { list_id: "backend", priority: 3 });
      const packet = await p().ok("arbeit_resume", { list_id: "frontend" }, alice);
      assert.deepEqual(focusOf(packet), [elsewhere, "best_ready"]);
      assert.match(packet.focus.note, /Nothing is ready in list frontend.*rest of the project \(list backend\)/);
      // The caller's own list (--list, ARBEIT_LIST) the same way.
      const asCaller = await p().ok("arbeit_resume", { peek: true }, { ...bob, list_id: "frontend" });
      assert.deepEqual(focusOf(asCaller), [held, "claimed"], "bob's own claim comes first, from any list");
      // A list with work keeps its own, and says nothing.
      const own = await p().task("frontend work", { list_id: "frontend", priority: 4 });
      const scoped = await p().ok(
        "arbeit_resume",
        { list_id: "frontend", peek: true },
        { session: "ses-carol", agent: "carol" },
      );
      assert.deepEqual(focusOf(scoped), [own, "best_ready"]);
      assert.equal(scoped.focus.note, undefined);
      // Nothing ready anywhere: no focus, and no note.
      for (const id of [own, elsewhere, later])
        await p().ok("arbeit_task_update", { task_id: id, status: "cancelled" }, alice);
      const none = await p().ok(
        "arbeit_resume",
        { list_id: "frontend", peek: true },
        { session: "ses-dan", agent: "dan" },
      );
      assert.deepEqual(focusOf(none), [null, "none"]);
      assert.equal(none.focus.note, undefined);
    });

    it("fits every budget from the smallest allowed (400 tokens) up, keeping the focus task", async () => {
      const epic = await p().task("Harden the login flow");
      const blockers = [];
      for (const name of ["Rate limiter service", "Audit log schema", "Session store migration"])
        blockers.push(await p().task(name));
      const long = (word: string) => `${word} `.repeat(800);
      const focus = await p().task("Add rate limiting to the login endpoint", {
        type: "feature",
        parent_id: epic,
        blocked_by: blockers,
        intent: long("why"),
        description: long("what"),
        plan: long("how"),
        priority: 0,
      });
      await p().ok("arbeit_task_start_work", { task_id: focus }, alice);
      for (let i = 0; i < 12; i++) {
        await p().ok(
          "arbeit_context_add",
          { task_id: focus, type: "decision", content: `decision ${i} `.repeat(40) },
          bob,
        );
        await p().ok("arbeit_memory", { action: "set", key: `fact-${i}`, value: `fact ${i} `.repeat(30) }, alice);
      }
      await p().ok(
        "arbeit_progress_add",
        { task_id: focus, items: Array.from({ length: 12 }, (_, i) => `step ${i} `.repeat(12)) },
        alice,
      );
      for (let i = 0; i < 5; i++)
        await p().service.trackFile({ path: `${p().root}/src/file-${i}.ts`, operation: "write" }, alice);
      for (let max = 400; max <= 2400; max += 20) {
        const packet = await p().ok("arbeit_resume", { peek: true, max_tokens: max }, alice);
        assert.ok(
          packet.budget.estimated_tokens <= max,
          `${packet.budget.estimated_tokens} tokens for a budget of ${max}: ${packet.budget.cut}`,
        );
        assert.equal(packet.focus.task.id, focus, `with ${max} tokens`);
        assert.match(packet.focus.task.title, /^Add rate limiting/);
      }
    });

    it("gives a caller without a session one that fits the 128-character limit, also for a 128-character agent", async () => {
      const long = { session: null, agent: "a".repeat(128) };
      const twin = { session: null, agent: `${"a".repeat(127)}b` };
      const one = await p().task("one");
      const two = await p().task("two");
      const started = await p().ok("arbeit_task_start_work", { task_id: one }, long);
      const other = await p().ok("arbeit_task_start_work", { task_id: two }, twin);
      assert.ok(started.session_id.length <= 128, started.session_id);
      assert.ok(started.session_id.startsWith("agent:aaaa"), started.session_id);
      assert.notEqual(other.session_id, started.session_id, "two agents never share a session");
      // The same agent acts as the same session again, and the name can be given back.
      assert.deepEqual(focusOf(await p().ok("arbeit_resume", {}, long)), [one, "kept_focus"]);
      await p().ok("arbeit_task_stop_work", { task_id: one, session: started.session_id }, alice);
      assert.equal(await p().read((tx) => tx.activeWork(started.session_id)), undefined);
      // A short agent name is its session, as ever.
      const short = await p().ok("arbeit_task_start_work", { task_id: one }, { session: null, agent: "carol" });
      assert.equal(short.session_id, "agent:carol");
    });

    it("moves the agent's cursor forward only, and peek leaves it where it was", async () => {
      const id = await p().task("shared");
      await p().ok("arbeit_task_claim", { task_id: id }, alice);
      const first = await p().ok("arbeit_resume", {}, alice);
      assert.ok(first.events.total >= 2);
      assert.equal(first.cursor.previous, 0);
      assert.equal(first.cursor.current, await p().lastSeq());
      await p().ok("arbeit_context_add", { task_id: id, type: "note", content: "bob was here" }, bob);
      const peek = await p().ok("arbeit_resume", { peek: true }, alice);
      assert.equal(peek.events.total, 1);
      assert.equal(peek.events.by_other_agents, 1);
      assert.equal(peek.cursor.advanced, false);
      const second = await p().ok("arbeit_resume", {}, alice);
      assert.equal(second.events.total, 1);
      assert.equal(second.cursor.previous, first.cursor.current);
      const third = await p().ok("arbeit_resume", {}, alice);
      assert.equal(third.events.total, 0);
      const state = await p().read((tx) => tx.sessionState("ses-alice"));
      assert.equal(state?.cursor_seq, third.cursor.current);
      assert.equal(state?.focus_task_id, id);
      await p().store.write((tx) =>
        tx.saveSessionState("ses-alice", { agent: "alice", cursor_seq: 1, focus_task_id: null }, "x"),
      );
      const back = await p().read((tx) => tx.sessionState("ses-alice"));
      assert.deepEqual(back, {
        session_id: "ses-alice",
        agent: "alice",
        cursor_seq: third.cursor.current,
        focus_task_id: null,
        updated_at: "x",
      });
    });
  });
}
