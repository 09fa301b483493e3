import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { CLI, runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

const POSTGRES_SKIP = await postgresSkip();

interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Spawns `arbeit mcp` in `cwd`; `ended` settles with how the process ended. */
function startServer(
  cwd: string,
  env: Record<string, string> = {},
): { child: ChildProcessWithoutNullStreams; ended: Promise<Ending>; stderr(): string } {
  const child = spawn(process.execPath, [CLI, "mcp"], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const ended = new Promise<Ending>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, ended, stderr: () => stderr };
}

/**
 * Waits for the server to end. The bound only turns a server that never ends into a failure
 * that says so (and a process killed); it claims nothing about how fast it should go.
 */
async function endOf(server: ReturnType<typeof startServer>, after: string, boundMs = 60_000): Promise<Ending> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"bound">((resolve) => {
    timer = setTimeout(() => resolve("bound"), boundMs);
  });
  const ending = await Promise.race([server.ended, bound]);
  clearTimeout(timer);
  if (ending === "bound") {
    server.child.kill("SIGKILL");
    assert.fail(`the server was still running ${boundMs / 1000} s after ${after}: ${server.stderr()}`);
  }
  return ending;
}

describe("arbeit mcp: process lifetime", () => {
  // On Postgres the server also holds a pool of sockets, which it has to let go of to end.
  for (const engine of ["sqlite", "postgres"] as const) {
    it(`exits by itself, with 0, when the client closes its stdin after using the ${engine} store`, {
      skip: engine === "postgres" ? POSTGRES_SKIP : false,
    }, async () => {
      const dir = tempDir();
      const schema = uniqueSchema("arbeit_mcp_lifetime");
      const env: Record<string, string> =
        engine === "postgres" ? { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema } : {};
      try {
        const server = startServer(dir.dir, env);
        const client = new Client({ name: "arbeit-test-client", version: "1.0.0" });
        await client.connect(new ChildTransport(server.child));
        for (const [tool, args] of [
          ["arbeit_init", {}],
          ["arbeit_task_create", { title: "Opens the database" }],
        ] as const) {
          const result = (await client.callTool({ name: tool, arguments: args })) as { structuredContent?: any };
          assert.equal(result.structuredContent?.success, true, JSON.stringify(result));
        }
        await client.close();
        // Only stdin closed, and no signal sent: ending at all, and with 0, is the server's own doing.
        assert.deepEqual(await endOf(server, "its stdin closed"), { code: 0, signal: null });
        assert.equal(server.stderr(), "");
      } finally {
        if (engine === "postgres") await dropSchema(schema);
        dir.cleanup();
      }
    });
  }

  it("exits 0 when stdin ends, with nothing but JSON-RPC on stdout", async () => {
    const dir = tempDir();
    const server = startServer(dir.dir);
    const { child } = server;
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
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
    assert.deepEqual(await endOf(server, "its stdin ended"), { code: 0, signal: null });
    const lines = stdout.trim().split("\n");
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).result.serverInfo.name, "arbeit");
    dir.cleanup();
  });

  it("exits 0 on SIGTERM", async () => {
    const dir = tempDir();
    const server = startServer(dir.dir);
    const { child } = server;
    // Wait until the server is up (it answers a ping), then ask it to stop.
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    await new Promise((resolve) => child.stdout.once("data", resolve));
    child.kill("SIGTERM");
    assert.deepEqual(await endOf(server, "SIGTERM"), { code: 0, signal: null });
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
