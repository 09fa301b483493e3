import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

/** `arbeit status`: what the store holds, who works on what, which hosts are set up, and a verdict. */

const cleanups: Array<() => void> = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

async function project(): Promise<string> {
  const { dir, cleanup } = tempDir("arbeit-status-");
  cleanups.push(cleanup);
  assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
  return dir;
}

async function arbeit(dir: string, ...args: string[]) {
  const result = await runCli(args, { cwd: dir, env: { ARBEIT_SESSION: "ses-status", ARBEIT_AGENT: "tester" } });
  assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}${result.stdout}`);
  return result.json.data;
}

const status = (dir: string, env: Record<string, string> = {}) => runCli(["status", "--json"], { cwd: dir, env });

describe("arbeit status", () => {
  it("reports the store, task counts by status, and that nothing needs attention (exit 0)", async () => {
    const dir = await project();
    const done = (await arbeit(dir, "task", "create", "Done already")).task.id;
    await arbeit(dir, "task", "create", "Still open");
    await arbeit(dir, "call", "arbeit_task_update", JSON.stringify({ task_id: done, status: "cancelled" }));
    const result = await status(dir);
    assert.equal(result.code, 0, result.stderr);
    const report = result.json;
    assert.equal(report.ok, true);
    assert.deepEqual(report.store, {
      engine: "sqlite",
      location: join(dir, ".arbeit", "arbeit.db"),
      schema_version: report.store.schema_version,
    });
    assert.ok(report.store.schema_version >= 4);
    assert.deepEqual(report.tasks, { open: 1, in_progress: 0, completed: 0, cancelled: 1, total: 2 });
    assert.deepEqual(report.working, []);
    assert.deepEqual(report.claims, { live: 0, expired: 0 });
    assert.deepEqual(
      report.hosts.map((host: any) => [host.host, host.installed, host.detail]),
      [
        ["claude-code", false, "not set up"],
        ["opencode", false, "not set up"],
      ],
    );
    assert.deepEqual(report.attention, []);
  });

  it("shows who works on what, with live claims", async () => {
    const dir = await project();
    const id = (await arbeit(dir, "task", "create", "Rate limiting")).task.id;
    await arbeit(dir, "call", "arbeit_task_start_work", JSON.stringify({ task_id: id }));
    const report = (await status(dir)).json;
    assert.deepEqual(
      report.working.map((work: any) => [work.session_id, work.agent, work.task_id, work.title]),
      [["ses-status", "tester", id, "Rate limiting"]],
    );
    assert.deepEqual(report.claims, { live: 1, expired: 0 });
    assert.equal(report.tasks.in_progress, 1);
  });

  it("exits 1 on a claim whose lease ran out, with the repair as a hint; after doctor --fix, 0", async () => {
    const dir = await project();
    const id = (await arbeit(dir, "task", "create", "Abandoned")).task.id;
    await arbeit(dir, "call", "arbeit_task_claim", JSON.stringify({ task_id: id }));
    // The agent went away: its lease ran out an hour ago.
    const db = new Database(join(dir, ".arbeit", "arbeit.db"));
    db.prepare("UPDATE tasks SET lease_expires_at = ? WHERE id = ?").run(
      new Date(Date.now() - 3_600_000).toISOString(),
      id,
    );
    db.close();
    const result = await status(dir);
    assert.equal(result.code, 1);
    assert.equal(result.json.ok, false);
    assert.deepEqual(result.json.claims, { live: 0, expired: 1 });
    assert.deepEqual(
      result.json.attention.map((item: any) => item.code),
      ["EXPIRED_CLAIMS"],
    );
    assert.match(result.json.attention[0].hint, /arbeit doctor --fix/);
    await runCli(["doctor", "--fix"], { cwd: dir });
    assert.equal((await status(dir)).code, 0);
  });

  it("sees Claude Code set up by setup, and names a hook that is gone or a command that no longer exists", async () => {
    const dir = await project();
    await arbeit(dir, "setup", "claude");
    let report = (await status(dir)).json;
    assert.deepEqual(report.hosts[0], {
      host: "claude-code",
      installed: true,
      detail: "12 of 12 hooks, MCP server, instructions in CLAUDE.md",
      problems: [],
    });
    const settingsPath = join(dir, ".claude", "settings.json");
    const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
    delete settings.hooks.PreCompact;
    // An installation that moved away after setup wrote its path.
    settings.hooks.SessionStart[0].hooks[0].command = "'/gone/arbeit/dist/cli/main.js' hook session-start";
    writeFileSync(settingsPath, JSON.stringify(settings));
    // Instructions written by an older version, which named other steps.
    const claudeMd = join(dir, "CLAUDE.md");
    writeFileSync(claudeMd, readFileSync(claudeMd, "utf8").replace("Session start", "At the start"));
    const result = await status(dir);
    assert.equal(result.code, 1);
    report = result.json;
    assert.equal(report.hosts[0].detail, "11 of 12 hooks, MCP server, instructions in CLAUDE.md");
    assert.deepEqual(
      report.attention.map((item: any) => item.code),
      ["HOST_INCOMPLETE", "HOST_COMMAND_MISSING", "HOST_INSTRUCTIONS_OUTDATED"],
    );
    assert.match(report.attention[0].message, /no Arbeit hook for PreCompact/);
    assert.match(report.attention[1].message, /\/gone\/arbeit\/dist\/cli\/main\.js, which does not exist/);
  });

  it("reports a host configuration that is not JSON instead of failing", async () => {
    const dir = await project();
    writeFileSync(join(dir, ".mcp.json"), "{ not json");
    const result = await status(dir);
    assert.equal(result.code, 1);
    assert.deepEqual(
      result.json.attention.map((item: any) => item.code),
      ["HOST_CONFIG_UNREADABLE"],
    );
  });

  it("sees the OpenCode plugin, and a plugin file whose import is gone", async () => {
    const dir = await project();
    await arbeit(dir, "setup", "opencode");
    let report = (await status(dir)).json;
    assert.equal(report.hosts[1].installed, true);
    assert.deepEqual(report.hosts[1].problems, []);
    mkdirSync(join(dir, ".opencode", "plugin"), { recursive: true });
    writeFileSync(
      join(dir, ".opencode", "plugin", "arbeit.js"),
      'export { default } from "file:///gone/arbeit/dist/opencode/server.js";\n',
    );
    writeFileSync(join(dir, "opencode.json"), JSON.stringify({ plugin: ["arbeit"] }));
    report = (await status(dir)).json;
    assert.deepEqual(
      report.attention.map((item: any) => item.code),
      ["HOST_COMMAND_MISSING", "HOST_PLUGIN_TWICE"],
    );
  });

  it("without a store: NOT_INITIALIZED, exit 1", async () => {
    const { dir, cleanup } = tempDir("arbeit-status-none-");
    cleanups.push(cleanup);
    const result = await status(dir);
    assert.equal(result.code, 1);
    assert.equal(result.json.error.code, "NOT_INITIALIZED");
  });

  it("--help says what exit 1 means, and a mistyped flag is a usage error (the text view is run by docs/cli.md)", async () => {
    const dir = await project();
    const help = await runCli(["status", "--help"], { cwd: dir });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit 0 when nothing needs attention, 1 when something does/);
    const unknown = await runCli(["status", "--chek"], { cwd: dir });
    assert.equal(unknown.code, 2);
  });
});

describe("arbeit status on Postgres", { skip: await postgresSkip() }, () => {
  const schema = uniqueSchema("arbeit_status");
  after(() => dropSchema(schema));

  it("names the engine and the server, never the password", async () => {
    const { dir, cleanup } = tempDir("arbeit-status-pg-");
    cleanups.push(cleanup);
    const env = { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema };
    assert.equal((await runCli(["init"], { cwd: dir, env })).code, 0);
    assert.equal((await runCli(["task", "create", "On the server"], { cwd: dir, env })).code, 0);
    const result = await status(dir, env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.store.engine, "postgres");
    assert.equal(result.json.tasks.open, 1);
    assert.match(result.json.store.location, new RegExp(schema));
  });
});
