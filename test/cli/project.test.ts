import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { assertToolError, type CliProject, cliProject } from "./support.js";

/** Where the CLI finds its database, and who the CLI says is acting. */
describe("project discovery", () => {
  const projects: CliProject[] = [];
  const open = async (init = true) => {
    const project = await cliProject({ init });
    projects.push(project);
    return project;
  };
  after(() => {
    for (const project of projects) project.cleanup();
  });

  it("answers NOT_INITIALIZED outside a project, suggesting arbeit init", async () => {
    const project = await open(false);
    const result = await project.run(["query", "tasks"]);
    assertToolError(result, "NOT_INITIALIZED");
    assert.ok(result.json.error.suggestions.some((hint: string) => hint.includes("arbeit init")));
    assert.equal(existsSync(join(project.dir, ".arbeit")), false, "a read creates nothing");
  });

  it("answers NOT_INITIALIZED from arbeit call too", async () => {
    const project = await open(false);
    assertToolError(await project.run(["call", "arbeit_task_create", '{"title": "x"}']), "NOT_INITIALIZED");
  });

  it("finds the project root from a subdirectory, like git", async () => {
    const project = await open();
    const deep = join(project.dir, "packages", "web", "src");
    mkdirSync(deep, { recursive: true });
    const created = await project.ok(["task", "create", "From deep inside"], { cwd: deep });
    const listed = await project.ok(["query", "tasks"]);
    assert.deepEqual(
      listed.tasks.map((task: { id: string }) => task.id),
      [created.task.id],
    );
  });

  it("init inside an initialised project is ALREADY_INITIALIZED naming it; --nested makes a separate store", async () => {
    const project = await open();
    await project.ok(["task", "create", "In the outer project"]);
    const nested = join(project.dir, "vendor", "lib");
    mkdirSync(nested, { recursive: true });
    const refused = await runCli(["init", "--json"], { cwd: nested });
    assert.equal(refused.code, 1);
    assert.equal(refused.json.error.code, "ALREADY_INITIALIZED");
    assert.equal(refused.json.error.details.root, project.dir);
    assert.match(refused.json.error.message, new RegExp(project.dir.replaceAll("/", "\\/")));
    assert.ok(!existsSync(join(nested, ".arbeit")), "no second store shadows the first");
    // Commands below the root keep using the outer store.
    assert.equal((await project.ok(["query", "tasks"], { cwd: nested })).tasks.length, 1);

    const data = await project.ok(["init", "--nested"], { cwd: nested });
    assert.equal(data.path, join(nested, ".arbeit", "arbeit.db"));
    assert.equal((await project.ok(["query", "tasks"], { cwd: nested })).tasks.length, 0);
  });

  it("--db uses the given database file instead of the discovered one", async () => {
    const project = await open();
    const { dir: elsewhere, cleanup } = tempDir();
    try {
      const db = join(elsewhere, "shared.db");
      const init = await project.ok(["init", "--db", db]);
      assert.equal(init.path, db);
      const created = await project.ok(["task", "create", "In the shared file", "--db", db]);

      const viaFlag = await project.ok(["query", "tasks", "--db", db]);
      assert.deepEqual(
        viaFlag.tasks.map((task: { id: string }) => task.id),
        [created.task.id],
      );
      const local = await project.ok(["query", "tasks"]);
      assert.deepEqual(local.tasks, [], "the project's own database is untouched");
    } finally {
      cleanup();
    }
  });

  it("ARBEIT_DB does the same from the environment, and --db wins over it", async () => {
    const project = await open(false);
    const { dir: elsewhere, cleanup } = tempDir();
    try {
      const fromEnv = join(elsewhere, "env.db");
      const fromFlag = join(elsewhere, "flag.db");
      const env = { ARBEIT_DB: fromEnv };
      await project.ok(["init"], { env });
      await project.ok(["init", "--db", fromFlag]);
      const created = await project.ok(["task", "create", "Via the environment"], { env });

      const viaEnv = await project.ok(["query", "tasks"], { env });
      assert.deepEqual(
        viaEnv.tasks.map((task: { id: string }) => task.id),
        [created.task.id],
      );
      const flagWins = await project.ok(["query", "tasks", "--db", fromFlag], { env });
      assert.deepEqual(flagWins.tasks, []);
      assert.equal(existsSync(join(project.dir, ".arbeit")), false);
    } finally {
      cleanup();
    }
  });

  it("answers NOT_INITIALIZED when --db names a file that does not exist", async () => {
    const project = await open();
    const result = await project.run(["query", "tasks", "--db", join(project.dir, "missing.db")]);
    assertToolError(result, "NOT_INITIALIZED");
    assert.match(result.json.error.message, /missing\.db/);
  });
});

describe("session and agent", () => {
  let project: CliProject;
  after(() => project.cleanup());

  /** [session, agent] of the task's first event of each type, as the event log recorded them. */
  const recordedBy = async (taskId: string, types: string[]) => {
    const { events } = await project.ok(["query", "events", "--task-id", taskId]);
    return types.map((type) => {
      const event = events.find((e: { event_type: string }) => e.event_type === type);
      return [type, event?.session_id, event?.agent];
    });
  };

  /** [session, agent] of each session linked to the task. */
  const sessionLinks = async (taskId: string) => {
    const { sessions } = await project.ok(["task", "get", taskId, "--include", "sessions"]);
    return sessions.map((link: { session_id: string; agent: string }) => [link.session_id, link.agent]);
  };

  it('defaults to agent "cli" acting as the session "agent:cli"', async () => {
    project = await cliProject();
    const { task } = await project.ok(["task", "create", "Defaults"]);
    const started = await project.ok(["task", "start", task.id]);
    assert.equal(started.session_id, "agent:cli");
    assert.deepEqual(await recordedBy(task.id, ["task_created", "work_started"]), [
      ["task_created", "agent:cli", "cli"],
      ["work_started", "agent:cli", "cli"],
    ]);
  });

  it("records --session and --agent on events and session links", async () => {
    const { task } = await project.ok(["task", "create", "Flags", "--session", "s-flag", "--agent", "planner"]);
    await project.ok(["task", "start", task.id, "--session", "s-flag", "--agent", "planner"]);
    assert.deepEqual(await recordedBy(task.id, ["task_created", "work_started"]), [
      ["task_created", "s-flag", "planner"],
      ["work_started", "s-flag", "planner"],
    ]);
    assert.deepEqual(await sessionLinks(task.id), [["s-flag", "planner"]]);
  });

  it("takes ARBEIT_SESSION and ARBEIT_AGENT from the environment, and the flags win over them", async () => {
    const env = { ARBEIT_SESSION: "s-env", ARBEIT_AGENT: "builder" };
    const { task } = await project.ok(["task", "create", "Environment"], { env });
    await project.ok(["task", "start", task.id], { env });
    await project.ok(["context", "add", task.id, "note", "Flag beats env", "--agent", "reviewer"], { env });
    assert.deepEqual(await recordedBy(task.id, ["task_created", "work_started", "context_added"]), [
      ["task_created", "s-env", "builder"],
      ["work_started", "s-env", "builder"],
      ["context_added", "s-env", "reviewer"],
    ]);
    assert.deepEqual(await sessionLinks(task.id), [["s-env", "builder"]]);
  });

  it("keeps each session's active work apart", async () => {
    const a = (await project.ok(["task", "create", "A"])).task.id;
    const b = (await project.ok(["task", "create", "B"])).task.id;
    await project.ok(["task", "start", a, "--session", "one"]);
    assertToolError(await project.run(["task", "start", b, "--session", "one"]), "ALREADY_WORKING");
    const other = await project.ok(["task", "start", b, "--session", "two"]);
    assert.equal(other.session_linked, true);
  });
});
