import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { leaseRanOut, sharedStore } from "./helpers.js";

/**
 * Fencing keys on the claim: a session whose claim on a task moved to another session (its lease
 * ran out and the other took the task) writes nothing more to the task, whether it started work
 * on it or only claimed it, until it lets go; it reserves no files for it either, named or not.
 */

const postgres = { skip: await postgresSkip() };
let sessions = 0;

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`fencing on the claim on ${engine}`, { ...(engine === "postgres" ? postgres : {}) }, () => {
    const shared = sharedStore(engine, "arbeit_fencing");
    const { dir, env } = shared;

    /** A caller of its own: `arbeit call` with its session and agent; the envelope. */
    const session = (agent: string) => {
      const id = `${agent}-${++sessions}`;
      const call = async (tool: string, args: Record<string, unknown>) => {
        const result = await runCli(["call", tool, JSON.stringify(args), "--session", id, "--agent", agent], {
          cwd: dir,
          env,
        });
        assert.ok(result.json, result.stdout + result.stderr);
        return result.json;
      };
      return Object.assign(call, { id });
    };
    const newTask = async (title: string) =>
      (await shared.service.createTask({ title }, { session: null, agent: "setup" })).data.task.id as string;
    const read = async (id: string) =>
      (await shared.service.getTask({ task_id: id, include: ["context_all", "progress"] })).data;

    it("refuses progress, decisions and renames from a session that only claimed, once its claim moved, until it lets go", async () => {
      const alice = session("alice");
      const bob = session("bob");
      const id = await newTask("claimed, not started");
      assert.equal((await alice("arbeit_task_claim", { task_id: id })).success, true);
      const step = (await alice("arbeit_progress_add", { task_id: id, items: ["First step"] })).data.items[0].id;
      await leaseRanOut(shared.service, id);
      assert.equal((await bob("arbeit_task_claim", { task_id: id })).success, true);
      const taken = await read(id);

      for (const [tool, args] of [
        ["arbeit_progress_add", { task_id: id, items: ["Another step"] }],
        ["arbeit_progress_complete", { item_ids: [step] }],
        ["arbeit_context_add", { task_id: id, type: "decision", content: "Use the old parser" }],
        ["arbeit_task_update", { task_id: id, title: "Renamed by a stale holder" }],
        ["arbeit_task_update", { task_id: id, description: "Mine, I thought" }],
        ["arbeit_memory", { action: "set", scope: "task", scope_id: id, key: "approach", value: "the old parser" }],
      ] as const) {
        const refused = await alice(tool, args);
        assert.equal(refused.error?.code, "CLAIM_MOVED", `${tool}: ${JSON.stringify(refused)}`);
        assert.match(refused.error.message, /no longer this session's: its claim moved to bob/);
      }
      assert.deepEqual(await read(id), taken, "the refused writes changed nothing");

      // Letting go makes it one more collaborator: a note is welcome, the claim stays bob's.
      assert.equal((await alice("arbeit_task_stop_work", { task_id: id })).data.stopped, true);
      assert.equal(
        (await alice("arbeit_context_add", { task_id: id, type: "note", content: "Over to bob" })).success,
        true,
      );
      assert.equal((await read(id)).task.owner, "bob");
    });

    it("refuses a reservation for the task from a session whose claim moved, with task_id or without, and the new holder edits freely", async () => {
      const alice = session("alice");
      const bob = session("bob");
      const id = await newTask("worked on, then taken");
      assert.equal((await alice("arbeit_task_start_work", { task_id: id })).success, true);
      await leaseRanOut(shared.service, id);
      assert.equal((await bob("arbeit_task_claim", { task_id: id })).success, true);

      for (const args of [{ paths: ["src/parser.ts"], task_id: id }, { paths: ["src/parser.ts"] }]) {
        const refused = await alice("arbeit_task_claim", args);
        assert.equal(refused.error?.code, "CLAIM_MOVED", `${JSON.stringify(args)}: ${JSON.stringify(refused)}`);
      }
      const check = await runCli(["check-edit", "src/parser.ts", "--session", bob.id, "--json"], {
        cwd: dir,
        env,
      });
      assert.equal(check.json?.data?.decision, "allow", check.stdout + check.stderr);
    });

    it("lets a session that handed its claim back, and one that never held it, write to the task the other holds", async () => {
      const alice = session("alice");
      const bob = session("bob");
      const carol = session("carol");
      const id = await newTask("handed back");
      assert.equal((await alice("arbeit_task_claim", { task_id: id })).success, true);
      assert.equal((await alice("arbeit_task_claim", { action: "release", task_id: id })).success, true);
      assert.equal((await bob("arbeit_task_claim", { task_id: id })).success, true);

      for (const who of [alice, carol])
        assert.equal((await who("arbeit_context_add", { task_id: id, type: "note", content: "A hint" })).success, true);
    });
  });
}
