import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ArbeitError } from "../../src/domain/errors.js";
import { initProject, openProject } from "../../src/service/project.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { postgresTarget } from "../../src/store/postgres/target.js";
import { runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

const skip = await postgresSkip();
const caller = { session: "ses-1", agent: "machine-a" };

describe("choosing the store: ARBEIT_DATABASE_URL", () => {
  it("selects Postgres from the option or the environment; a SQLite file (--db) wins", () => {
    const env = { ARBEIT_DATABASE_URL: "postgres://h/db", ARBEIT_DATABASE_SCHEMA: "team" };
    assert.equal(postgresTarget({}, {}), undefined);
    assert.deepEqual(postgresTarget({}, env), { url: "postgres://h/db", schema: "team" });
    assert.deepEqual(postgresTarget({ databaseUrl: "postgresql://x/y" }, {}), {
      url: "postgresql://x/y",
      schema: undefined,
    });
    assert.equal(postgresTarget({ db: "local.db" }, env), undefined);
    assert.throws(
      () => postgresTarget({}, { ARBEIT_DATABASE_URL: "sqlite:///tmp/x.db" }),
      (error: unknown) => error instanceof ArbeitError && error.code === "INVALID_ARGUMENT",
    );
  });
});

describe("a project on Postgres", { skip }, () => {
  const schemas: string[] = [];
  const dirs: Array<() => void> = [];
  const project = () => {
    const { dir, cleanup } = tempDir();
    dirs.push(cleanup);
    return dir;
  };
  const schema = () => {
    const name = uniqueSchema("arbeit_project");
    schemas.push(name);
    return name;
  };
  after(async () => {
    for (const name of schemas) await dropSchema(name);
    for (const cleanup of dirs) cleanup();
  });

  it("init marks the checkout with .arbeit/ and migrates the shared schema; the store is Postgres", async () => {
    const dir = project();
    const databaseSchema = schema();
    const options = { cwd: dir, databaseUrl: TEST_DATABASE_URL, databaseSchema };
    await assert.rejects(openProject(options), (error: unknown) => (error as ArbeitError).code === "NOT_INITIALIZED");
    const init = await initProject(options);
    assert.equal(init.root, dir);
    assert.match(init.path, new RegExp(`schema ${databaseSchema}`));
    assert.ok(existsSync(join(dir, ".arbeit")));
    assert.ok(!existsSync(join(dir, ".arbeit", "arbeit.db")), "no SQLite file in Postgres mode");
    await assert.rejects(
      initProject(options),
      (error: unknown) => (error as ArbeitError).code === "ALREADY_INITIALIZED",
    );
    const service = await openProject(options);
    try {
      assert.ok(service.store instanceof PostgresTaskStore);
      assert.equal(service.projectRoot, dir);
    } finally {
      await service.close();
    }
  });

  it("lets two checkouts (machines) share one task graph", async () => {
    const databaseSchema = schema();
    const [a, b] = [project(), project()];
    for (const cwd of [a, b]) await initProject({ cwd, databaseUrl: TEST_DATABASE_URL, databaseSchema });
    const first = await openProject({ cwd: a, databaseUrl: TEST_DATABASE_URL, databaseSchema });
    const second = await openProject({ cwd: b, databaseUrl: TEST_DATABASE_URL, databaseSchema });
    try {
      const { data } = await first.createTask({ title: "shared" }, caller);
      const claim = await second.claim({ next: true }, { session: "ses-2", agent: "machine-b" });
      assert.equal((claim.data as { task: { id: string } }).task.id, data.task.id);
      const denied = await first.claim({ task_id: data.task.id }, caller).catch((error: ArbeitError) => error.code);
      assert.equal(denied, "ALREADY_CLAIMED");
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("reaches the CLI through the environment: arbeit init and arbeit call", async () => {
    const dir = project();
    const env = { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema(), ARBEIT_AGENT: "cli" };
    const init = await runCli(["init"], { cwd: dir, env });
    assert.equal(init.code, 0, init.stdout + init.stderr);
    const created = await runCli(["call", "arbeit_task_create", '{"title":"from the CLI"}'], { cwd: dir, env });
    assert.equal(created.code, 0, created.stdout + created.stderr);
    const listed = await runCli(["call", "arbeit_query", '{"query":"tasks"}'], { cwd: dir, env });
    assert.deepEqual(
      listed.json.data.tasks.map((t: { title: string }) => t.title),
      ["from the CLI"],
    );
    const service = await openProject({
      cwd: dir,
      databaseUrl: env.ARBEIT_DATABASE_URL,
      databaseSchema: env.ARBEIT_DATABASE_SCHEMA,
    });
    try {
      const tasks = await service.store.read((tx) => tx.listTasks({ limit: 10, offset: 0 }));
      assert.equal(tasks[0]?.title, "from the CLI");
    } finally {
      await service.close();
    }
  });
});
