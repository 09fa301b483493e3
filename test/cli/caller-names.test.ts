import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The names a caller acts under (--session, --agent, --list and their ARBEIT_* variables) follow
 * the rules the tools apply to the same names. A list the `list_id` argument refuses would hold
 * tasks no call could ever filter by again, so it is refused before anything is written.
 */

const { dir, cleanup } = tempDir();
before(async () => {
  assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
});
after(cleanup);

const CREATE = ["call", "arbeit_task_create", '{"title":"named"}'];

async function taskCount(): Promise<number> {
  const result = await runCli(["call", "arbeit_query", '{"query":"tasks"}'], { cwd: dir });
  assert.equal(result.code, 0, result.stdout);
  return result.json.data.tasks.length;
}

describe("caller names from flags and ARBEIT_* variables", () => {
  it("the tool itself refuses a list_id with a space, the rule the CLI's list follows", async () => {
    const result = await runCli(["call", "arbeit_task_create", '{"title":"x","list_id":"my list"}'], { cwd: dir });
    assert.equal(result.json.error.code, "INVALID_ARGUMENT");
    assert.match(result.stdout, /may hold letters, digits and \. _ : \/ - only/);
  });

  const cases: Array<{ how: string; args: string[]; env: Record<string, string>; says: RegExp }> = [
    {
      how: "ARBEIT_LIST",
      args: [],
      env: { ARBEIT_LIST: "my list" },
      says: /^arbeit: ARBEIT_LIST may hold letters, digits and \. _ : \/ - only/,
    },
    {
      how: "--list",
      args: ["--list", "sprint#4"],
      env: {},
      says: /^arbeit: --list may hold letters, digits and \. _ : \/ - only/,
    },
    {
      how: "ARBEIT_SESSION",
      args: [],
      env: { ARBEIT_SESSION: "a\tb" },
      says: /^arbeit: ARBEIT_SESSION must not contain control characters/,
    },
    {
      how: "--agent",
      args: ["--agent", "x".repeat(129)],
      env: {},
      says: /^arbeit: --agent must be at most 128 characters/,
    },
  ];
  for (const { how, args, env, says } of cases) {
    it(`a name the tools refuse in ${how} is a usage error (exit 2) naming the rule; nothing is written`, async () => {
      const before = await taskCount();
      for (const command of [CREATE, ["task", "create", "--title", "named"]]) {
        const result = await runCli([...args, ...command], { cwd: dir, env });
        assert.equal(result.code, 2, `${command.join(" ")}: ${result.stdout}${result.stderr}`);
        assert.match(result.stderr, says);
      }
      const mcp = await runCli([...args, "mcp"], { cwd: dir, env });
      assert.equal(mcp.code, 2, mcp.stderr);
      assert.match(mcp.stderr, says);
      assert.equal(await taskCount(), before);
    });
  }

  it("a hook under a bad ARBEIT_LIST is skipped with a note on stderr, exit 0 and nothing on stdout", async () => {
    const payload = JSON.stringify({
      session_id: "s-1",
      cwd: dir,
      hook_event_name: "UserPromptSubmit",
      prompt: "hello",
    });
    const result = await runCli(["hook", "user-prompt-submit"], {
      cwd: dir,
      env: { ARBEIT_LIST: "my list" },
      input: payload,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /list may hold letters, digits/);
  });

  it("a valid list from ARBEIT_LIST is used as before", async () => {
    const made = await runCli(CREATE, { cwd: dir, env: { ARBEIT_LIST: "team/sprint-4" } });
    assert.equal(made.code, 0, made.stdout + made.stderr);
    assert.equal(made.json.data.task.list_id, "team/sprint-4");
  });
});
