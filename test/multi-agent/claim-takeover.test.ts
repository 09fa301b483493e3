import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { letLeaseRunOut } from "../helpers/expiry.js";
import { postgresSkip } from "../helpers/postgres.js";
import { sharedStore } from "./helpers.js";

/**
 * Nobody ends or changes another session's live claim, nor reshapes the task under it, without
 * force: every write that would (a status change, an owner change, a delete, a new title, parent
 * or set of blockers, any of these inside a batch) is refused with
 * ALREADY_CLAIMED naming the holder, leaves the task as it was, and with `force: true` goes
 * through, the broken claim logged as a forced release naming the holder's session.
 */

const postgres = { skip: await postgresSkip() };
let holders = 0;
/** A session of agent alice of its own, so that work it starts never collides with another test's. */
const holder = () => ({ session: `holder-${++holders}`, agent: "alice" });

/** A write another session makes to the held task `id` (`other`: a task of no one's), as arbeit_call arguments. */
type Takeover = (id: string, other: string) => { tool: string; args: Record<string, unknown> };

const TAKEOVERS: Record<string, Takeover> = {
  "completing it": (id) => ({ tool: "arbeit_task_update", args: { task_id: id, status: "completed" } }),
  "cancelling it": (id) => ({ tool: "arbeit_task_update", args: { task_id: id, status: "cancelled" } }),
  "reopening it": (id) => ({ tool: "arbeit_task_update", args: { task_id: id, status: "open" } }),
  "giving it another owner": (id) => ({ tool: "arbeit_task_update", args: { task_id: id, owner: "bob" } }),
  "deleting it": (id) => ({ tool: "arbeit_task_delete", args: { task_id: id } }),
  "renaming it": (id) => ({ tool: "arbeit_task_update", args: { task_id: id, title: "Something else" } }),
  "moving it under another parent": (id, other) => ({
    tool: "arbeit_task_update",
    args: { task_id: id, parent_id: other },
  }),
  "giving it a blocker": (id, other) => ({ tool: "arbeit_task_update", args: { task_id: id, blocked_by: [other] } }),
  "renaming it in a batch": (id) => ({
    tool: "arbeit_batch",
    args: { operations: [{ tool: "arbeit_task_update", args: { task_id: id, title: "Batched rename" } }] },
  }),
  "cancelling it in a batch": (id) => ({
    tool: "arbeit_batch",
    args: { operations: [{ tool: "arbeit_task_update", args: { task_id: id, status: "cancelled" } }] },
  }),
  "deleting it in a batch": (id) => ({
    tool: "arbeit_batch",
    args: { operations: [{ tool: "arbeit_task_delete", args: { task_id: id } }] },
  }),
};

/** `force: true` on the write itself, or on each operation of a batch. */
function forced({ tool, args }: ReturnType<Takeover>): ReturnType<Takeover> {
  if (tool !== "arbeit_batch") return { tool, args: { ...args, force: true } };
  const operations = (args.operations as Array<{ tool: string; args: Record<string, unknown> }>).map((op) => ({
    ...op,
    args: { ...op.args, force: true },
  }));
  return { tool, args: { operations } };
}

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`another session's live claim on ${engine}`, { ...(engine === "postgres" ? postgres : {}) }, () => {
    const shared = sharedStore(engine, "arbeit_takeover");
    const { dir, env } = shared;

    /** `arbeit call` as session `other-1` of agent `bob`. */
    const call = async ({ tool, args }: ReturnType<Takeover>) => {
      const result = await runCli(["call", tool, JSON.stringify(args), "--session", "other-1", "--agent", "bob"], {
        cwd: dir,
        env,
      });
      assert.ok(result.json, result.stdout + result.stderr);
      return result.json;
    };
    const read = async (id: string) => (await shared.service.getTask({ task_id: id })).data;
    const releases = async (id: string) =>
      (
        (
          await shared.service.query(
            { query: "events", params: { task_id: id, event_types: ["claim_released"] } },
            { session: null, agent: "check" },
          )
        ).data as { events: Array<{ session_id: string; payload: Record<string, unknown> }> }
      ).events.map((event) => [event.session_id, event.payload.reason, event.payload.session, event.payload.owner]);

    for (const [name, takeover] of Object.entries(TAKEOVERS)) {
      it(`refuses ${name} without force, and logs the broken claim when forced`, async () => {
        const alice = holder();
        const id = (await shared.service.createTask({ title: `held: ${name}` }, alice)).data.task.id;
        const started = await shared.service.startWork({ task_id: id }, alice);
        const lease = started.data.task.lease_expires_at;
        const other = (await shared.service.createTask({ title: `other: ${name}` }, alice)).data.task.id;
        const held = await read(id);

        const refused = await call(takeover(id, other));
        assert.equal(refused.success, false);
        assert.equal(refused.error.code, "ALREADY_CLAIMED", JSON.stringify(refused));
        assert.equal(refused.error.details.owner, "alice");
        assert.equal(refused.error.details.lease_expires_at, lease);
        assert.deepEqual(await read(id), held, "the refused write changed nothing");
        assert.deepEqual(await releases(id), []);

        const done = await call(forced(takeover(id, other)));
        assert.equal(done.success, true, JSON.stringify(done));
        assert.deepEqual((await releases(id))[0], ["other-1", "forced", alice.session, "alice"]);
      });
    }

    it("refuses an edge that gives a held task another parent or blocker, or takes one away, and writes nothing", async () => {
      const alice = holder();
      const make = async (title: string) => (await shared.service.createTask({ title }, alice)).data.task.id;
      const [parent, blocker, newParent, newBlocker] = [
        await make("parent"),
        await make("blocker"),
        await make("new parent"),
        await make("new blocker"),
      ];
      const id = (await shared.service.createTask({ title: "held", parent_id: parent, blocked_by: [blocker] }, alice))
        .data.task.id;
      const orphan = await make("held, without a parent");
      await shared.service.claim({ task_id: id }, alice);
      await shared.service.claim({ task_id: orphan }, alice);
      const held = [await read(id), await read(orphan)];
      for (const args of [
        { action: "add", from_task_id: newBlocker, to_task_id: id, type: "blocks" },
        { action: "add", from_task_id: id, to_task_id: newBlocker, type: "blocked_by" },
        { action: "remove", from_task_id: blocker, to_task_id: id, type: "blocks" },
        { action: "remove", from_task_id: parent, to_task_id: id, type: "parent_of" },
        { action: "add", from_task_id: orphan, to_task_id: newParent, type: "child_of" },
      ]) {
        const refused = await call({ tool: "arbeit_relationship", args });
        assert.equal(refused.error?.code, "ALREADY_CLAIMED", `${JSON.stringify(args)}: ${JSON.stringify(refused)}`);
        assert.equal(refused.error.details.owner, "alice");
      }
      assert.deepEqual([await read(id), await read(orphan)], held, "the refused edges changed nothing");
      // Edges that leave the held task's own parent and blockers as they are stay open.
      const free = await call({
        tool: "arbeit_relationship",
        args: { action: "add", from_task_id: id, to_task_id: newBlocker, type: "blocks" },
      });
      assert.equal(free.success, true, JSON.stringify(free));
    });

    it("refuses a reshaping that is wrong in itself for that reason, not for the claim", async () => {
      const alice = holder();
      const make = async (title: string, more: Record<string, unknown> = {}) =>
        (await shared.service.createTask({ title, ...more }, alice)).data.task.id;
      const parent = await make("parent");
      const id = await make("held", { parent_id: parent });
      const after = await make("waits for the held task", { blocked_by: [id] });
      const child = await make("child of the held task", { parent_id: id });
      const other = await make("another parent");
      let deepest = await make("level 1");
      for (const level of [2, 3, 4]) deepest = await make(`level ${level}`, { parent_id: deepest });
      const loose = await make("held, without a parent");
      await shared.service.claim({ task_id: id }, alice);
      await shared.service.claim({ task_id: loose }, alice);
      const held = [await read(id), await read(loose)];
      const edge = (from_task_id: string, type: string, to_task_id: string) => ({
        tool: "arbeit_relationship",
        args: { action: "add", from_task_id, to_task_id, type },
      });
      for (const [takeover, code] of [
        [edge(id, "blocks", id), "CIRCULAR_DEPENDENCY"],
        [edge(after, "blocks", id), "CIRCULAR_DEPENDENCY"],
        [edge(other, "parent_of", id), "RELATIONSHIP_EXISTS"],
        [edge(deepest, "parent_of", loose), "MAX_DEPTH_EXCEEDED"],
        [{ tool: "arbeit_task_update", args: { task_id: id, parent_id: child } }, "CIRCULAR_DEPENDENCY"],
      ] as const) {
        const refused = await call(takeover);
        assert.equal(refused.error?.code, code, `${JSON.stringify(takeover)}: ${JSON.stringify(refused)}`);
      }
      assert.deepEqual([await read(id), await read(loose)], held, "the refused calls changed nothing");
    });

    it("lets the holder itself reopen and delete its task without force", async () => {
      const alice = holder();
      const id = (await shared.service.createTask({ title: "own" }, alice)).data.task.id;
      await shared.service.startWork({ task_id: id }, alice);
      const own = async (tool: string, args: Record<string, unknown>) =>
        (
          await runCli(["call", tool, JSON.stringify(args), "--session", alice.session, "--agent", alice.agent], {
            cwd: dir,
            env,
          })
        ).json;
      assert.equal((await own("arbeit_task_update", { task_id: id, status: "open" })).success, true);
      assert.equal((await own("arbeit_task_delete", { task_id: id })).success, true);
      assert.deepEqual(
        (await releases(id)).filter(([, reason]) => reason === "forced"),
        [],
      );
    });

    it("refuses the writes of a session still working on a task whose claim moved to another", async () => {
      const alice = holder();
      const id = (await shared.service.createTask({ title: "moved on" }, alice)).data.task.id;
      await shared.service.startWork({ task_id: id }, alice);
      const item = (await shared.service.addProgress({ task_id: id, items: ["Step"] }, alice)).data.items[0]!.id;
      const person = { session: "oncall", agent: "human:oncall" };
      await shared.service.claim({ action: "release", task_id: id, force: true }, person);
      await shared.service.claim({ task_id: id }, { session: "other-1", agent: "bob" });
      const asAlice = async (tool: string, args: Record<string, unknown>) =>
        (
          await runCli(["call", tool, JSON.stringify(args), "--session", alice.session, "--agent", alice.agent], {
            cwd: dir,
            env,
          })
        ).json;

      for (const [tool, args] of [
        ["arbeit_context_add", { task_id: id, type: "note", content: "Still at it" }],
        ["arbeit_progress_add", { task_id: id, items: ["Another step"] }],
        ["arbeit_progress_complete", { item_ids: [item] }],
        ["arbeit_task_update", { task_id: id, description: "Mine, I thought" }],
      ] as const) {
        const refused = await asAlice(tool, args);
        assert.equal(refused.error?.code, "CLAIM_MOVED", `${tool}: ${JSON.stringify(refused)}`);
        assert.match(refused.error.message, /no longer this session's: its claim moved to bob/);
        assert.doesNotMatch(refused.error.suggestions.join(" "), /force/);
      }
      // Having stopped, alice is one more collaborator: notes from anyone are welcome.
      assert.equal((await asAlice("arbeit_task_stop_work", { task_id: id })).success, true);
      assert.equal(
        (await asAlice("arbeit_context_add", { task_id: id, type: "note", content: "Handing over" })).success,
        true,
      );
    });

    it("takes no force for a task whose lease ran out", async () => {
      const alice = holder();
      const id = (await shared.service.createTask({ title: "lapsed" }, alice)).data.task.id;
      await shared.service.claim({ task_id: id }, alice);
      await letLeaseRunOut(shared.service.store, id);
      assert.equal(
        (await call({ tool: "arbeit_task_update", args: { task_id: id, status: "cancelled" } })).success,
        true,
      );
    });
  });
}
