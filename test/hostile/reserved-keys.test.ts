import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { CLI } from "../helpers/cli.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * Metadata keys `__proto__`, `constructor` and `prototype` are refused (INVALID_METADATA) wherever
 * metadata is written or filtered: an object built from `__proto__` loses the key without a word
 * (a filter on it then filters nothing and lists every task), and the other two name what every
 * JavaScript object already has. Nothing is written when one is refused.
 */

const RESERVED = ["__proto__", "constructor", "prototype"];

/** JSON text with `key` as a real key: JSON.stringify of an object literal would drop `__proto__` first. */
const withKey = (key: string, value: string) => `{${JSON.stringify(key)}: ${value}}`;

async function taskCount(project: HostileProject): Promise<number> {
  return (await project.ok("arbeit_query", { query: "tasks", params: { limit: 200 } })).tasks.length;
}

function refusedAsMetadata(result: { code: number; json: any; stdout: string }, key: string) {
  assert.equal(result.code, 1, result.stdout);
  assert.equal(result.json.error.code, "INVALID_METADATA", result.stdout);
  assert.ok(result.json.error.message.includes(key), result.json.error.message);
}

forEachEngine("reserved metadata keys", (project) => {
  it("creating a task with one refuses it, at the top level or deeper, and writes nothing", async () => {
    const p = await project();
    for (const key of RESERVED) {
      for (const metadata of [withKey(key, '{"x": 1}'), withKey(key, '"v"'), `{"outer": ${withKey(key, "1")}}`]) {
        const result = await p.cli(["call", "arbeit_task_create", `{"title": "kept?", "metadata": ${metadata}}`]);
        refusedAsMetadata(result, key);
      }
      refusedAsMetadata(await p.cli(["task", "create", "flagged", "--metadata", withKey(key, "1"), "--json"]), key);
    }
    assert.equal(await taskCount(p), 0);
  });

  it("updating a task's metadata with one refuses it and leaves the task as it was", async () => {
    const p = await project();
    const task = (await p.ok("arbeit_task_create", { title: "labelled", metadata: { team: "ui" } })).task;
    for (const key of RESERVED) {
      const args = `{"task_id": "${task.id}", "metadata": ${withKey(key, '"x"')}}`;
      refusedAsMetadata(await p.cli(["call", "arbeit_task_update", args]), key);
    }
    const now = (await p.ok("arbeit_task_get", { task_id: task.id })).task;
    assert.equal(now.version, task.version);
    assert.deepEqual(now.metadata, { team: "ui" });
  });

  it("a filter on one is refused instead of matching every task", async () => {
    const p = await project();
    await p.ok("arbeit_task_create", { title: "one" });
    await p.ok("arbeit_task_create", { title: "two", metadata: { team: "ui" } });
    for (const key of RESERVED) {
      const args = `{"query": "tasks", "params": {"metadata": ${withKey(key, '"x"')}}}`;
      refusedAsMetadata(await p.cli(["call", "arbeit_query", args]), key);
      refusedAsMetadata(await p.cli(["query", "tasks", "--metadata", withKey(key, '"x"'), "--json"]), key);
    }
  });

  it("context entries and relationships refuse one in their metadata", async () => {
    const p = await project();
    const a = (await p.ok("arbeit_task_create", { title: "a" })).task.id;
    const b = (await p.ok("arbeit_task_create", { title: "b" })).task.id;
    for (const key of RESERVED) {
      const context = `{"task_id": "${a}", "type": "note", "content": "n", "metadata": ${withKey(key, "1")}}`;
      refusedAsMetadata(await p.cli(["call", "arbeit_context_add", context]), key);
      const link = `{"action": "add", "from_task_id": "${a}", "to_task_id": "${b}", "type": "relates_to", "metadata": ${withKey(key, "1")}}`;
      refusedAsMetadata(await p.cli(["call", "arbeit_relationship", link]), key);
    }
    const got = (await p.ok("arbeit_task_get", { task_id: a, include: ["context", "relationships"] })).task;
    assert.deepEqual([got.context ?? [], got.relationships ?? []].flat(), []);
  });

  it("a batch refuses one in an operation's metadata, and a key of that name among an operation's arguments, as the tool called alone does", async () => {
    const p = await project();
    const file = join(p.dir, "batch.json");
    writeFileSync(
      file,
      `[{"tool": "arbeit_task_create", "args": {"title": "first"}},
        {"tool": "arbeit_task_create", "args": {"title": "second", "metadata": ${withKey("__proto__", '{"a": 1}')}}}]`,
    );
    const result = await p.cli(["batch", file, "--json"]);
    refusedAsMetadata(result, "__proto__");
    writeFileSync(file, `[{"tool": "arbeit_task_create", "args": {"title": "third", "__proto__": {"a": 1}}}]`);
    const alone = await p.cli(["call", "arbeit_task_create", `{"title": "fourth", "__proto__": {"a": 1}}`]);
    const batched = await p.cli(["batch", file, "--json"]);
    assert.equal(alone.json.error.code, "INVALID_ARGUMENT", alone.stdout);
    assert.equal(batched.json.error.code, "INVALID_ARGUMENT", batched.stdout);
    assert.equal(await taskCount(p), 0);
  });

  it("a query's params refuse a key of that name, as they refuse any key they do not know", async () => {
    const p = await project();
    const result = await p.cli(["call", "arbeit_query", `{"query": "tasks", "params": {"__proto__": {"limit": 1}}}`]);
    assert.equal(result.json.error.code, "INVALID_ARGUMENT", result.stdout);
  });

  it("a backup from before the rule, whose metadata holds constructor, still restores", async () => {
    const p = await project();
    const made = (await p.ok("arbeit_task_create", { title: "old", metadata: { team: "ui" } })).task;
    const dump = join(p.dir, "before.jsonl");
    assert.equal((await p.cli(["export", dump, "--json"])).code, 0);
    writeFileSync(dump, readFileSync(dump, "utf8").replaceAll('\\"team\\":', '\\"constructor\\":'));
    const into = await project();
    const restored = await into.cli(["import", dump, "--json"]);
    assert.equal(restored.code, 0, restored.stdout + restored.stderr);
    assert.deepEqual((await into.ok("arbeit_task_get", { task_id: made.id })).task.metadata, { constructor: "ui" });
    // Such a key can still be removed (null), though never set again.
    const removed = await into.cli([
      "call",
      "arbeit_task_update",
      `{"task_id": "${made.id}", "metadata": {"constructor": null, "team": "ui"}}`,
    ]);
    assert.equal(removed.code, 0, removed.stdout);
    assert.deepEqual(removed.json.data.task.metadata, { team: "ui" });
    const created = await into.cli(["call", "arbeit_task_create", `{"title": "t", "metadata": {"prototype": null}}`]);
    assert.equal(created.code, 0, created.stdout);
    assert.equal(created.json.data.task.metadata, null);
    refusedAsMetadata(
      await into.cli([
        "call",
        "arbeit_context_add",
        `{"task_id": "${made.id}", "type": "note", "content": "c", "metadata": {"constructor": null}}`,
      ]),
      "constructor",
    );
  });

  it("the MCP server refuses one too", async () => {
    const { dir, env } = await project();
    const child = spawn(process.execPath, [CLI, "mcp"], { cwd: dir, env: { ...process.env, ...env }, stdio: "pipe" });
    const transport = new ChildTransport(child);
    const client = new Client({ name: "reserved-keys", version: "1.0.0" });
    await client.connect(transport);
    try {
      const metadata = JSON.parse(withKey("__proto__", '{"polluted": true}'));
      const made = await client.callTool({ name: "arbeit_task_create", arguments: { title: "via mcp", metadata } });
      assert.equal(made.isError, true, JSON.stringify(made));
      assert.equal((made.structuredContent as any).error.code, "INVALID_METADATA");
      const filter = JSON.parse(withKey("__proto__", '"x"'));
      await client.callTool({ name: "arbeit_task_create", arguments: { title: "another" } });
      const listed = await client.callTool({
        name: "arbeit_query",
        arguments: { query: "tasks", params: { metadata: filter } },
      });
      assert.equal((listed.structuredContent as any).error?.code, "INVALID_METADATA", JSON.stringify(listed));
    } finally {
      await client.close();
    }
  });
});
