import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { connectMcp, isRunning } from "./mcp-client.js";

describe("arbeit mcp: process lifetime", () => {
  it("exits by itself when the client closes", async () => {
    const dir = tempDir();
    const mcp = await connectMcp(dir.dir);
    await mcp.ok("arbeit_init");
    await mcp.ok("arbeit_task_create", { title: "Opens the database" });
    const started = Date.now();
    await mcp.close();
    // The transport would SIGTERM a server still running after 2 s; ours is gone well before.
    assert.ok(Date.now() - started < 1500, `closed in ${Date.now() - started} ms`);
    assert.equal(isRunning(mcp.pid), false);
    assert.equal(mcp.stderr(), "");
    dir.cleanup();
  });

  it("exits 0 when stdin ends, with nothing but JSON-RPC on stdout", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, "mcp"], { cwd: dir.dir, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
      })}\n`,
    );
    await new Promise((resolve) => child.stdout.once("data", resolve));
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    assert.equal(await exited, 0);
    clearTimeout(timer);
    const lines = stdout.trim().split("\n");
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).result.serverInfo.name, "arbeit");
    dir.cleanup();
  });

  it("exits 0 on SIGTERM", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, "mcp"], { cwd: dir.dir, stdio: ["pipe", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    // Wait until the server is up (it answers a ping), then ask it to stop.
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    await new Promise((resolve) => child.stdout.once("data", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    assert.equal(await exited, 0);
    clearTimeout(timer);
    dir.cleanup();
  });

  it("has --help, and refuses stray arguments as a usage error", async () => {
    const dir = tempDir();
    const help = await runCli(["mcp", "--help"], { cwd: dir.dir });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: arbeit mcp/);
    const stray = await runCli(["mcp", "serve"], { cwd: dir.dir });
    assert.equal(stray.code, 2);
    dir.cleanup();
  });
});
