import assert from "node:assert/strict";
import { it } from "node:test";
import type { Caller } from "../../../src/service/caller.js";
import { type ContractProject, type StoreFactory, suite, useStore } from "./harness.js";

/** How many calls each test fires at once. */
const AT_ONCE = 6;

const busy: Caller = { session: "ses-busy", agent: "busy" };
const sessions = (prefix: string): Caller[] =>
  Array.from({ length: AT_ONCE }, (_, i) => ({ session: `${prefix}-${i}`, agent: `${prefix}-agent-${i}` }));
const codes = (results: Array<{ success: boolean; error?: { code: string } }>) =>
  results.map((r) => (r.success ? "ok" : r.error!.code));

/**
 * Reads at once, as many as the calls a test fires: a pooled store then holds that many open
 * connections, as a long-running process does, and the calls' transactions start together rather
 * than one connection handshake apart.
 */
async function warm(p: () => { read: ContractProject["read"] }): Promise<void> {
  await Promise.all(Array.from({ length: AT_ONCE }, () => p().read((tx) => tx.maxEventSeq())));
}

/**
 * The rules a write checks before it writes (one live task per session, a request id's one run,
 * an entry superseded once, a step completed once, a commit recorded once, the memory merged
 * once, a scope's room), with the calls fired all at once on one store: a pooled store runs them
 * in parallel transactions, and every rule must hold as if they had run one by one.
 */
export function sessionRaceContract(factory: StoreFactory): void {
  suite(
    "rules checked before a write, with the calls fired at once",
    () => {
      const p = useStore(factory);

      it(`a session starting work on ${AT_ONCE} tasks at once works on one; the others are ALREADY_WORKING, and claim nothing`, async () => {
        const tasks: string[] = [];
        for (let i = 0; i < AT_ONCE; i++) tasks.push(await p().task(`job ${i}`));
        await warm(p);
        const results = await Promise.all(
          tasks.map((task_id) => p().call("arbeit_task_start_work", { task_id }, busy)),
        );
        const won = results.findIndex((r) => r.success);
        assert.deepEqual(codes(results).sort(), [
          "ALREADY_WORKING",
          "ALREADY_WORKING",
          "ALREADY_WORKING",
          "ALREADY_WORKING",
          "ALREADY_WORKING",
          "ok",
        ]);
        for (const r of results.filter((r) => !r.success)) assert.equal((r as any).error.details.task_id, tasks[won]);
        const now = p().clock.now().toISOString();
        assert.deepEqual(
          (await p().read((tx) => tx.claimsOf(busy.session!, now))).map((task) => task.id),
          [tasks[won]],
        );
        const active = await p().ok("arbeit_query", { query: "tasks", params: { status: "in_progress" } });
        assert.deepEqual(
          active.tasks.map((task: { id: string }) => task.id),
          [tasks[won]],
        );
        const started = await p().ok("arbeit_query", {
          query: "events",
          params: { event_types: ["work_started", "task_claimed"] },
        });
        assert.deepEqual(
          started.events.map((e: { event_type: string; task_id: string }) => [e.event_type, e.task_id]).sort(),
          [
            ["task_claimed", tasks[won]],
            ["work_started", tasks[won]],
          ],
        );
      });

      it("the same request_id sent several times at once runs the call once, and each answer is its response", async () => {
        const task = await p().task("Contended");
        await warm(p);
        const update = await Promise.all(
          Array.from({ length: AT_ONCE }, () =>
            p().call(
              "arbeit_task_update",
              { task_id: task, title: "Renamed once", expected_version: 1, request_id: "rename-1" },
              busy,
            ),
          ),
        );
        assert.deepEqual(codes(update), Array(AT_ONCE).fill("ok"));
        for (const r of update as any[]) assert.deepEqual(r.data, (update[0] as any).data);
        assert.equal((await p().ok("arbeit_task_get", { task_id: task })).task.version, 2);
        const gone = await p().task("Deleted once");
        const deleted = await Promise.all(
          Array.from({ length: AT_ONCE }, () =>
            p().call("arbeit_task_delete", { task_id: gone, request_id: "delete-1" }, busy),
          ),
        );
        assert.deepEqual(codes(deleted), Array(AT_ONCE).fill("ok"));
        const events = await p().ok("arbeit_query", {
          query: "events",
          params: { event_types: ["task_updated", "task_deleted"] },
        });
        assert.deepEqual(
          events.events.map((e: { event_type: string; task_id: string }) => [e.event_type, e.task_id]),
          [
            ["task_updated", task],
            ["task_deleted", gone],
          ],
        );
      });

      it("several people answering one question at once: one answer supersedes it, the others are ALREADY_SUPERSEDED", async () => {
        const task = await p().task("Export");
        const question = (
          await p().ok("arbeit_context_add", { task_id: task, type: "blocker", content: "Which encoding?" })
        ).entry.id;
        const people = sessions("person").map((caller, i) => ({ ...caller, agent: `human:p${i}` }));
        await warm(p);
        const results = await Promise.all(
          people.map((caller, i) =>
            p().call(
              "arbeit_context_add",
              { task_id: task, type: "user_input", content: `answer ${i}`, supersede_entry_id: question },
              caller,
            ),
          ),
        );
        assert.equal(codes(results).filter((c) => c === "ok").length, 1, codes(results).join(","));
        assert.ok(
          codes(results).every((c) => c === "ok" || c === "ALREADY_SUPERSEDED"),
          codes(results).join(","),
        );
        const winner = results.find((r) => r.success)!.data.entry.id;
        const context = await p().read((tx) => tx.contextOf(task, true));
        assert.deepEqual(
          context.map((entry) => [entry.type, entry.superseded_by]),
          [
            ["blocker", winner],
            ["user_input", null],
          ],
        );
      });

      it("several sessions merging the same memory entries at once: one merges them, the others find them gone", async () => {
        await p().ok("arbeit_memory", { action: "set", key: "a", value: "first" });
        await p().ok("arbeit_memory", { action: "set", key: "b", value: "second" });
        await p().ok("arbeit_memory", { action: "set", key: "b", value: "second again" });
        await warm(p);
        const results = await Promise.all(
          sessions("merger").map((caller) =>
            p().call("arbeit_memory", { action: "merge", keys: ["a", "b"], key: "a" }, caller),
          ),
        );
        assert.equal(codes(results).filter((c) => c === "ok").length, 1, codes(results).join(","));
        assert.ok(
          codes(results).every((c) => c === "ok" || c === "MEMORY_NOT_FOUND"),
          codes(results).join(","),
        );
        const kept = (await p().ok("arbeit_memory", { action: "get", key: "a" })).entry;
        assert.equal(kept.reinforced, 3);
        assert.equal((await p().ok("arbeit_memory", { action: "get", key: "b" })).entry, null);
        const deleted = await p().ok("arbeit_query", { query: "events", params: { event_types: ["memory_deleted"] } });
        assert.equal(deleted.events.length, 1);
      });

      it("new keys set at once in a full memory scope each make room: the scope never holds more than its limit", async () => {
        const limit = 200;
        await p().store.write(async () => {
          for (let i = 0; i < limit; i++)
            await p().ok("arbeit_memory", {
              action: "set",
              scope: "list",
              scope_id: "full",
              key: `old-${i}`,
              value: i,
            });
        });
        // Later than the old keys, so that none of the new is the weakest to evict.
        p().clock.advance(1000);
        await warm(p);
        const results = await Promise.all(
          sessions("writer").map((caller, i) =>
            p().call(
              "arbeit_memory",
              { action: "set", scope: "list", scope_id: "full", key: `new-${i}`, value: i },
              caller,
            ),
          ),
        );
        assert.deepEqual(codes(results), Array(AT_ONCE).fill("ok"));
        const entries = await p().ok("arbeit_memory", { action: "list", scope: "list", scope_id: "full", limit: 1000 });
        assert.equal(entries.entries.length, limit);
        for (let i = 0; i < AT_ONCE; i++)
          assert.ok(entries.entries.some((entry: { key: string }) => entry.key === `new-${i}`));
      });

      it("several sessions completing the same steps at once: each answers them done, and their completion is recorded once", async () => {
        const task = await p().task("Steps");
        const items = (await p().ok("arbeit_progress_add", { task_id: task, items: ["one", "two", "three"] })).items;
        const ids = items.map((item: { id: string }) => item.id);
        await warm(p);
        const results = await Promise.all(
          sessions("stepper").map((caller, i) =>
            p().call("arbeit_progress_complete", { item_ids: i % 2 === 0 ? ids : [...ids].reverse() }, caller),
          ),
        );
        assert.deepEqual(codes(results), Array(AT_ONCE).fill("ok"));
        for (const r of results as any[])
          for (const item of r.data.completed as Array<{ completed: boolean }>) assert.equal(item.completed, true);
        const done = await p().ok("arbeit_query", { query: "events", params: { event_types: ["progress_completed"] } });
        assert.equal(done.events.length, 1);
        assert.deepEqual([...done.events[0].payload.item_ids].sort(), [...ids].sort());
      });

      it("a commit seen at once by every sub-agent of the session at work on a task is recorded on it once", async () => {
        const task = await p().task("Ship it");
        await p().ok("arbeit_task_start_work", { task_id: task }, busy);
        const commit = { sha: "0123456789abcdef0123456789abcdef01234567", subject: "Ship it", files: ["src/a.ts"] };
        await warm(p);
        const answers = await Promise.all(
          Array.from({ length: AT_ONCE }, (_, i) =>
            p().service.recordCommit(commit, { session: `ses-busy/sub-${i}`, agent: "busy", parents: ["ses-busy"] }),
          ),
        );
        assert.deepEqual(answers.map((a) => (a.data.recorded ? "recorded" : a.data.reason)).sort(), [
          "already_recorded",
          "already_recorded",
          "already_recorded",
          "already_recorded",
          "already_recorded",
          "recorded",
        ]);
        const commits = await p().ok("arbeit_task_get", { task_id: task, include: ["commits"] });
        assert.equal(commits.commits.length, 1);
      });

      it("two moves at once that each fit but together make five levels: one is MAX_DEPTH_EXCEEDED", async () => {
        for (let round = 0; round < 3; round++) {
          // top; root > middle; sub > leaf. Moving root under top makes three levels down to
          // middle, moving sub under middle four down to leaf: either fits alone, not both.
          const top = await p().task(`top ${round}`);
          const root = await p().task(`root ${round}`);
          const middle = await p().task(`middle ${round}`, { parent_id: root });
          const sub = await p().task(`sub ${round}`);
          const leaf = await p().task(`leaf ${round}`, { parent_id: sub });
          const [a, b] = sessions("mover");
          await warm(p);
          const results = await Promise.all([
            p().call("arbeit_task_update", { task_id: root, parent_id: top }, a),
            p().call("arbeit_task_update", { task_id: sub, parent_id: middle }, b),
          ]);
          assert.deepEqual(codes(results).sort(), ["MAX_DEPTH_EXCEEDED", "ok"]);
          const levels = (await p().read((tx) => tx.ancestors(leaf))).length + 1;
          assert.ok(levels <= 4, `the leaf is at level ${levels}`);
        }
      });
    },
    { timeout: 120_000 },
  );
}
