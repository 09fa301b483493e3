import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { listPostgresMigrations } from "../../src/store/postgres/migrate.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { earlierRelease } from "../helpers/previous-release.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { type Service, startService } from "../serve/harness.js";
import type { UiProject } from "../ui/harness.js";
import {
  LATER_EXPAND,
  laterContract,
  laterRelease,
  migrateWith,
  postgresCheckout,
  versionsOf,
} from "./postgres-support.js";

/**
 * The release before the upgrade rule keeps working on a store this release migrated, proved with
 * that release's own code. The previous release is the commit this round of work started from,
 * 946f75d: package.json has said 0.1.0 since the first commit, so there is no version bump to
 * take instead, and its store code (src/store, migrations/) is what teams ran before this change.
 * It is built from git history (test/helpers/previous-release.ts, cached per commit).
 *
 * The schema is migrated by this release and by an expand a later release might ship (a new table
 * and a defaulted column on tasks), so the previous release meets a schema newer than any it
 * knows. It then creates, claims, finishes and queries tasks; this release reads what it wrote and
 * the other way round; both run at once; and a contract past it makes it refuse the store.
 */
const PREVIOUS = "946f75d";
const skip = (await postgresSkip()) || previousRelease();
const LATEST = listPostgresMigrations().length;

function previousRelease(): string | false {
  const release = earlierRelease(PREVIOUS);
  return requirement(`the previous release (${PREVIOUS})`, release.missing);
}

type Run = (args: string[], session?: string) => Promise<CliResult>;

describe(`the previous release (${PREVIOUS}) on a store this release migrated`, { skip, timeout: 600_000 }, () => {
  const schema = uniqueSchema("arbeit_previous");
  const cleanups: Array<() => void> = [];
  let old: Run;
  let now: Run;
  let later: string;

  /** Runs `cli` (undefined: this checkout's) in a checkout of its own on the schema; succeeds or fails the test. */
  const checkout = (cli: string | undefined): Run => {
    const { dir, cleanup } = tempDir("arbeit-previous-");
    cleanups.push(cleanup);
    const env = postgresCheckout(dir, schema);
    return (args, session = "ses-default") =>
      runCli([...args, "--json"], { cwd: dir, env: { ...env, ARBEIT_SESSION: session }, ...(cli ? { cli } : {}) });
  };
  const ok = async (run: Run, args: string[], session?: string) => {
    const result = await run(args, session);
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };
  const call = (run: Run, tool: string, args: unknown, session?: string) =>
    ok(run, ["call", tool, JSON.stringify(args)], session);

  before(async () => {
    const files = tempDir("arbeit-later-migrations-");
    cleanups.push(files.cleanup);
    later = files.dir;
    await migrateWith(schema, laterRelease(later, [LATER_EXPAND]));
    old = checkout(earlierRelease(PREVIOUS).cli);
    now = checkout(undefined);
  });
  after(async () => {
    await dropSchema(schema);
    for (const cleanup of cleanups) cleanup();
  });

  it("the schema is newer than any the previous release knows: its migrations are logged where that release does not look", async () => {
    const versions = await versionsOf(schema);
    assert.equal(versions.legacy, 14, "the previous release reads schema_migrations, and knows up to 14");
    assert.equal(Math.max(versions.legacy, ...versions.changes), LATEST + 1);
  });

  it("the previous release creates, claims, finishes and queries tasks on it, and this release reads what it wrote", async () => {
    const { task } = await call(old, "arbeit_task_create", { title: "Written by the previous release" }, "ses-old");
    await call(old, "arbeit_task_claim", { task_id: task.id }, "ses-old");
    await call(old, "arbeit_context_add", { task_id: task.id, type: "decision", content: "kept as it was" }, "ses-old");
    await call(old, "arbeit_task_update", { task_id: task.id, status: "completed" }, "ses-old");
    const { tasks: done } = await call(old, "arbeit_query", { query: "tasks", params: { status: "completed" } });
    assert.deepEqual(
      done.map((t: { id: string }) => t.id),
      [task.id],
    );

    const read = await call(now, "arbeit_task_get", { task_id: task.id, include: ["context"] });
    assert.equal(read.task.title, "Written by the previous release");
    assert.equal(read.task.status, "completed");
    assert.deepEqual(
      read.context.map((entry: { content: string }) => entry.content),
      ["kept as it was"],
    );
  });

  it("the previous release works on what this release wrote", async () => {
    const { task } = await call(
      now,
      "arbeit_task_create",
      { title: "Written by this release", risk: "high" },
      "ses-new",
    );
    const claimed = await call(old, "arbeit_task_claim", { task_id: task.id }, "ses-old-2");
    assert.equal(claimed.task.id, task.id);
    await call(old, "arbeit_task_update", { task_id: task.id, status: "completed" }, "ses-old-2");
    const after = await call(now, "arbeit_task_get", { task_id: task.id });
    assert.deepEqual([after.task.status, after.task.risk], ["completed", "high"]);
  });

  it("both releases at once on one store: every task created, claimed by exactly one session and finished", async () => {
    const workers = [
      ...[1, 2, 3].map((n) => ({ run: old, session: `ses-old-w${n}` })),
      ...[1, 2, 3].map((n) => ({ run: now, session: `ses-new-w${n}` })),
    ];
    const list = "concurrent";
    const created = await Promise.all(
      workers.map(({ run, session }) =>
        call(run, "arbeit_task_create", { title: `by ${session}`, list_id: list }, session),
      ),
    );
    const claims = await Promise.all(
      workers.map(({ run, session }) => call(run, "arbeit_task_claim", { next: true, list_id: list }, session)),
    );
    const claimedIds = claims.map((claim) => claim.task?.id);
    assert.equal(new Set(claimedIds).size, workers.length, `each session claimed its own task: ${claimedIds}`);
    assert.deepEqual([...claimedIds].sort(), created.map((c) => c.task.id).sort());
    await Promise.all(
      workers.map(({ run, session }, i) =>
        call(run, "arbeit_task_update", { task_id: claimedIds[i], status: "completed" }, session),
      ),
    );
    for (const run of [old, now]) {
      const { tasks } = await call(run, "arbeit_query", { query: "tasks", params: { status: "completed" } });
      const titles = tasks.map((t: { title: string }) => t.title).filter((t: string) => t.startsWith("by "));
      assert.deepEqual(titles.sort(), workers.map(({ session }) => `by ${session}`).sort());
    }
  });

  it("a contract past it makes the previous release refuse the store, writing nothing", async () => {
    await migrateWith(schema, laterRelease(later, [LATER_EXPAND, laterContract(LATEST + 1)]));
    const refused = await old(["task", "create", "must not land"], "ses-old");
    assert.equal(refused.code, 1, refused.stdout);
    assert.equal(refused.json?.error?.code, "SCHEMA_TOO_NEW", refused.stdout);
    assert.match(
      refused.json.error.message,
      new RegExp(`is at version ${LATEST + 2}, but this Arbeit only knows up to 14`),
    );
    const landed = await adminQuery(`SELECT COUNT(*) AS n FROM "${schema}".tasks WHERE title = 'must not land'`);
    assert.equal(Number(landed.rows[0].n), 0);
    // This release's newest migration is older than the contract's oldest compatible version too.
    const alsoRefused = await now(["task", "create", "must not land either"], "ses-new");
    assert.equal(alsoRefused.json?.error?.code, "SCHEMA_TOO_NEW", alsoRefused.stdout);
    assert.match(alsoRefused.json.error.message, /was migrated past this Arbeit/);
  });
});

describe(`a running service of the previous release (${PREVIOUS}), with a client attached, across the upgrade`, {
  skip,
  timeout: 300_000,
}, () => {
  const schema = uniqueSchema("arbeit_service_upgrade");
  const cleanups: Array<() => void> = [];
  after(async () => {
    await dropSchema(schema);
    for (const cleanup of cleanups) cleanup();
  });

  it("keeps serving its client while the store is migrated; the client moves to this release's service beside it, and nothing is lost", async () => {
    const oldCli = earlierRelease(PREVIOUS).cli;
    const folder = (prefix: string) => {
      const made = tempDir(prefix);
      cleanups.push(made.cleanup);
      return made.dir;
    };
    const env = { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema };
    const oldDir = folder("arbeit-old-service-");
    assert.equal((await runCli(["init", "--json"], { cwd: oldDir, env, cli: oldCli })).code, 0);
    const token = await runCli(["token", "create", "--agent", "alice", "--json"], { cwd: oldDir, env, cli: oldCli });
    assert.equal(token.code, 0, token.stdout + token.stderr);
    const secret: string = token.json.data.secret;
    const api = async (service: Service, tool: string, args: unknown) => {
      const response = await fetch(`${service.url}/api/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ tool, args, session: "ses-client" }),
      });
      const envelope = (await response.json()) as { success: boolean; data: any };
      assert.equal(envelope.success, true, `${tool} at ${service.url}: ${JSON.stringify(envelope)}`);
      return envelope.data;
    };

    const oldService = await startService({ dir: oldDir, env } as unknown as UiProject, [], oldCli);
    let newService: Service | undefined;
    try {
      const { task } = await api(oldService, "arbeit_task_create", { title: "Across the upgrade" });
      await api(oldService, "arbeit_task_claim", { task_id: task.id });
      await api(oldService, "arbeit_context_add", { task_id: task.id, type: "note", content: "before the migration" });
      // Reads the service prepares on its connections, of tables it reads whole (SELECT *) too.
      const read = () =>
        api(oldService, "arbeit_task_get", { task_id: task.id, include: ["context", "recent_events"] });
      for (let i = 0; i < 3; i++) await read();

      // The newer release's step (its service at start, or arbeit migrate): an expand, under the running service.
      const files = folder("arbeit-later-migrations-");
      await migrateWith(schema, laterRelease(files, [LATER_EXPAND]));
      await api(oldService, "arbeit_context_add", { task_id: task.id, type: "note", content: "after the migration" });
      for (let i = 0; i < 3; i++) await read();
      await api(oldService, "arbeit_query", { query: "tasks" });

      const newDir = folder("arbeit-new-service-");
      newService = await startService({ dir: newDir, env: postgresCheckout(newDir, schema) } as unknown as UiProject);
      // The same token, the same session: its claim carries over to the new service.
      await api(newService, "arbeit_task_update", { task_id: task.id, status: "completed" });
      assert.equal(await oldService.stop(), 0, oldService.stderr());
      const after = await api(newService, "arbeit_task_get", { task_id: task.id, include: ["context"] });
      assert.equal(after.task.status, "completed");
      assert.deepEqual(
        after.context.map((entry: { content: string }) => entry.content),
        ["before the migration", "after the migration"],
      );
    } finally {
      await oldService.stop();
      await newService?.stop();
    }
  });
});
