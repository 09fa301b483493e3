import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

/**
 * An export carried to another machine is a copy for sharing: the sessions that held claims and
 * worked on tasks there are not here, so `arbeit import` drops their claims and active work (the
 * owner stays as an assignment, the history stays) and every task is free for the sessions here.
 * `--keep-claims` restores a store as it was, claims and work included.
 */

const skipPostgres = await postgresSkip();
const schemas: string[] = [];
after(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

interface Engine {
  name: string;
  skip: string | false;
  /** The environment that points the CLI at a new, empty store of this engine. */
  store(): Record<string, string>;
}

const ENGINES: Engine[] = [
  { name: "SQLite", skip: false, store: () => ({}) },
  {
    name: "Postgres",
    skip: skipPostgres,
    store: () => {
      const schema = uniqueSchema("arbeit_share");
      schemas.push(schema);
      return { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema };
    },
  },
];

/** A project folder with an initialised store, and a way to call tools in it as one session. */
async function project(engine: Engine) {
  const { dir, cleanup } = tempDir();
  const env = engine.store();
  const init = await runCli(["init"], { cwd: dir, env });
  assert.equal(init.code, 0, init.stdout + init.stderr);
  const call = (session: string, tool: string, args: Record<string, unknown>, agent = "claude-code") =>
    runCli(["call", tool, JSON.stringify(args), "--session", session, "--agent", agent], { cwd: dir, env });
  const ok = async (session: string, tool: string, args: Record<string, unknown>, agent?: string) => {
    const result = await call(session, tool, args, agent);
    assert.equal(result.code, 0, `${tool}: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };
  return { dir, env, cleanup, call, ok, cli: (args: string[]) => runCli(args, { cwd: dir, env }) };
}

for (const engine of ENGINES) {
  describe(`export on one machine, import on another (${engine.name})`, { skip: engine.skip }, () => {
    /** A store where one session holds a claim on `claimed` and works on `worked`, exported. */
    async function exportedWithLiveWork() {
      const source = await project(engine);
      const claimed = (await source.ok("ses-there", "arbeit_task_create", { title: "claimed there" })).task.id;
      const worked = (await source.ok("ses-there", "arbeit_task_create", { title: "worked on there" })).task.id;
      await source.ok("ses-there", "arbeit_task_claim", { task_id: claimed });
      await source.ok("ses-there-too", "arbeit_task_start_work", { task_id: worked });
      const file = join(source.dir, "share.jsonl");
      const exported = await source.cli(["export", file]);
      assert.equal(exported.code, 0, exported.stdout);
      return { source, file, claimed, worked };
    }

    it("drops the other machine's claims and active work: the tasks are free for a session here", async () => {
      const { source, file, claimed, worked } = await exportedWithLiveWork();
      const target = await project(engine);
      const imported = await target.cli(["import", file]);
      assert.equal(imported.code, 0, imported.stdout + imported.stderr);
      assert.equal(imported.json.data.claims_kept, false);
      assert.equal(imported.json.data.leases_dropped, 2);
      assert.equal(imported.json.data.work_stopped, 1);

      // The owner stays as an assignment, and the history is the exporting store's history.
      const task = await target.ok("ses-look", "arbeit_task_get", {
        task_id: worked,
        include: ["recent_events", "sessions"],
      });
      assert.equal(task.task.owner, "claude-code");
      assert.equal(task.task.lease_expires_at, null);
      assert.deepEqual(
        task.sessions.map((link: { session_id: string }) => link.session_id),
        ["ses-there-too"],
        "the session that worked there stays linked to the task",
      );
      const types = task.recent_events.map((event: { event_type: string }) => event.event_type);
      assert.ok(types.includes("work_started"), `the history keeps the work started there: ${types}`);

      const ready = await target.ok("ses-here", "arbeit_query", { query: "ready" });
      assert.deepEqual(
        ready.tasks.map((task: { id: string }) => task.id),
        [claimed],
        "the claimed task is ready (the task worked on is in progress, so not 'ready')",
      );
      // The owner is an assignment, not a claim: a session of another agent may take the task too.
      const claim = await target.ok("ses-other", "arbeit_task_claim", { task_id: claimed }, "someone-else");
      assert.equal(claim.task.owner, "someone-else");
      const started = await target.ok("ses-here-too", "arbeit_task_start_work", { task_id: worked });
      assert.equal(started.task.id, worked);

      const doctor = await target.cli(["doctor", "--json"]);
      assert.equal(doctor.code, 0, doctor.stdout);
      source.cleanup();
      target.cleanup();
    });

    it("--keep-claims restores the claims and the work as exported", async () => {
      const { source, file, claimed, worked } = await exportedWithLiveWork();
      const target = await project(engine);
      const imported = await target.cli(["import", file, "--keep-claims"]);
      assert.equal(imported.code, 0, imported.stdout + imported.stderr);
      assert.equal(imported.json.data.claims_kept, true);
      assert.equal(imported.json.data.leases_dropped, 0);

      const ready = await target.ok("ses-here", "arbeit_query", { query: "ready" });
      assert.deepEqual(ready.tasks, []);
      for (const [tool, task_id] of [
        ["arbeit_task_claim", claimed],
        ["arbeit_task_start_work", worked],
      ] as const) {
        const refused = await target.call("ses-here", tool, { task_id });
        assert.equal(refused.code, 1, refused.stdout);
        assert.equal(refused.json.error.code, "ALREADY_CLAIMED");
      }
      // The session that held the claim still holds it.
      const renewed = await target.ok("ses-there", "arbeit_task_claim", { task_id: claimed, action: "renew" });
      assert.equal(renewed.task.id, claimed);
      source.cleanup();
      target.cleanup();
    });
  });
}
