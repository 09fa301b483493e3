import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * A hook or script passes its idempotency key in ARBEIT_REQUEST_ID, as it passes its session in
 * ARBEIT_SESSION: a retried command then replays the first answer and writes nothing. The flag
 * (--request-id, or request_id in the JSON of `arbeit call`) wins over the variable.
 */

const { dir, cleanup } = tempDir();
before(async () => {
  assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
});
after(cleanup);

async function titles(): Promise<string[]> {
  const result = await runCli(["call", "arbeit_query", '{"query":"tasks"}'], { cwd: dir });
  assert.equal(result.code, 0, result.stdout);
  return result.json.data.tasks.map((task: { title: string }) => task.title).sort();
}

const count = async (title: string) => (await titles()).filter((t) => t === title).length;

describe("ARBEIT_REQUEST_ID", () => {
  const commands: Array<{ how: string; args: (title: string) => string[] }> = [
    { how: "a tool command", args: (title) => ["task", "create", title, "--json"] },
    { how: "arbeit call", args: (title) => ["call", "arbeit_task_create", JSON.stringify({ title })] },
  ];
  for (const { how, args } of commands) {
    it(`a retried write through ${how} under the same key replays the first answer and writes once`, async () => {
      const title = `once through ${how}`;
      const env = { ARBEIT_REQUEST_ID: `key for ${how}` };
      const first = await runCli(args(title), { cwd: dir, env });
      const again = await runCli(args(title), { cwd: dir, env });
      assert.equal(first.code, 0, first.stdout + first.stderr);
      assert.deepEqual(again.json, first.json);
      assert.equal(await count(title), 1);
      // The same key for another call is the refusal a reused request_id gets.
      const other = await runCli(args(`${title}, changed`), { cwd: dir, env });
      assert.equal(other.code, 1);
      assert.equal(other.json.error.code, "INVALID_ARGUMENT");
      assert.equal(await count(`${title}, changed`), 0);
    });
  }

  it("arbeit batch takes it as the batch's key", async () => {
    const file = join(dir, "batch.json");
    writeFileSync(file, JSON.stringify([{ tool: "arbeit_task_create", args: { title: "batched once" } }]));
    const env = { ARBEIT_REQUEST_ID: "batch key" };
    const first = await runCli(["batch", file, "--json"], { cwd: dir, env });
    const again = await runCli(["batch", file, "--json"], { cwd: dir, env });
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.deepEqual(again.json, first.json);
    assert.equal(await count("batched once"), 1);
  });

  it("--request-id and a request_id in the JSON win over the variable", async () => {
    const env = { ARBEIT_REQUEST_ID: "shared by a shell" };
    const a = await runCli(["task", "create", "flag one", "--request-id", "flag-1", "--json"], { cwd: dir, env });
    const b = await runCli(["call", "arbeit_task_create", '{"title":"flag two","request_id":"flag-2"}'], {
      cwd: dir,
      env,
    });
    assert.equal(a.code, 0, a.stdout);
    assert.equal(b.code, 0, b.stdout);
    // Neither used the variable's key, so it is still free for a call of its own.
    const c = await runCli(["task", "create", "under the variable", "--json"], { cwd: dir, env });
    assert.equal(c.code, 0, c.stdout);
    const replay = await runCli(["task", "create", "flag one", "--request-id", "flag-1", "--json"], { cwd: dir });
    assert.deepEqual(replay.json, a.json);
    assert.equal(await count("flag one"), 1);
  });

  it("a read-only call ignores it, so one key exported in a shell does not break reads", async () => {
    const env = { ARBEIT_REQUEST_ID: "exported" };
    assert.equal((await runCli(["task", "create", "before reads", "--json"], { cwd: dir, env })).code, 0);
    const read = await runCli(["query", "ready", "--json"], { cwd: dir, env });
    assert.equal(read.code, 0, read.stdout + read.stderr);
  });

  it("an empty variable counts as unset", async () => {
    const env = { ARBEIT_REQUEST_ID: "" };
    for (let i = 0; i < 2; i++)
      assert.equal((await runCli(["task", "create", "twice", "--json"], { cwd: dir, env })).code, 0);
    assert.equal(await count("twice"), 2);
  });

  it("a key the tools would refuse is a usage error naming the variable; nothing is written", async () => {
    const result = await runCli(["task", "create", "too long a key", "--json"], {
      cwd: dir,
      env: { ARBEIT_REQUEST_ID: "k".repeat(201) },
    });
    assert.equal(result.code, 2, result.stdout);
    assert.match(result.stderr, /^arbeit: ARBEIT_REQUEST_ID /);
    assert.equal(await count("too long a key"), 0);
  });

  it("is named in the help of a command that writes", async () => {
    const help = await runCli(["task", "create", "--help"], { cwd: dir });
    assert.match(help.stdout, /--request-id <text>\s+Idempotency key \(env ARBEIT_REQUEST_ID\)/);
    assert.match((await runCli(["call", "--help"], { cwd: dir })).stdout, /ARBEIT_REQUEST_ID/);
  });
});
