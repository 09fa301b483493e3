import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { CLI } from "../helpers/cli.js";
import { forEachEngine } from "./engines.js";

/**
 * The MCP server meets a client that misbehaves: a message over the size limit, a line that is
 * not JSON, JSON that is not JSON-RPC. Each gets a JSON-RPC error and a line on stderr, and the
 * server keeps serving the real SDK client on the same connection.
 */

forEachEngine("the MCP server and a misbehaving client", (project) => {
  it("answers an oversized message, a non-JSON line and a non-JSON-RPC line with errors, and keeps serving", async () => {
    const { dir, env } = await project();
    const child = spawn(process.execPath, [CLI, "mcp"], { cwd: dir, env: { ...process.env, ...env }, stdio: "pipe" });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const transport = new ChildTransport(child);
    const client = new Client({ name: "hostile-client", version: "1.0.0" });
    await client.connect(transport);

    // 20 MiB in one JSON-RPC request: over the limit, in many writes.
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 99,
      method: "tools/call",
      params: { name: "arbeit_task_create", arguments: { title: "x".repeat(20 * 1024 * 1024) } },
    });
    for (let at = 0; at < huge.length; at += 1024 * 1024) await transport.raw(huge.slice(at, at + 1024 * 1024));
    await transport.raw("\n");
    await transport.raw("this is not json\n");
    await transport.raw('{"hello": "world"}\n');
    const answers = await transport.nullAnswers(3);
    assert.deepEqual(
      answers.map((answer) => (answer as { error: { code: number } }).error.code),
      [-32600, -32700, -32600],
    );
    assert.match((answers[0] as { error: { message: string } }).error.message, /over the 16 MiB limit/);
    assert.match(stderr, /over the 16 MiB limit/);
    assert.match(stderr, /not valid JSON/);

    // The same connection still works for the real client.
    const result = await client.callTool({ name: "arbeit_task_create", arguments: { title: "after the noise" } });
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal((result.structuredContent as any).data.task.title, "after the noise");
    const listed = await client.callTool({ name: "arbeit_query", arguments: { query: "tasks" } });
    assert.deepEqual(
      (listed.structuredContent as any).data.tasks.map((task: any) => task.title),
      ["after the noise"],
      "the oversized create wrote nothing",
    );
    await client.close();
    assert.equal(await exited, 0);
  });
});
