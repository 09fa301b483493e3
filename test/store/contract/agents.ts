import assert from "node:assert/strict";
import { it } from "node:test";
import { isDeepStrictEqual } from "node:util";
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
