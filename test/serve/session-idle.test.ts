import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, mcpClient, type Service, startService } from "./harness.js";

/**
 * An MCP client that dies without `DELETE /mcp` leaves its session behind. With one open session
 * allowed per token, such a session would lock the token out until the service restarts; an idle
 * session (no request in progress, no stream open) is closed after `--session-idle` seconds, and
 * a request naming it is answered 404, the MCP signal to initialize again.
 */
describe("arbeit serve --max-sessions 1 --session-idle 1: abandoned MCP sessions", () => {
  let project: UiProject;
  let service: Service;
  before(async () => {
    project = await uiProject("sqlite");
    service = await startService(project, ["--max-sessions", "1", "--session-idle", "1"]);
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  /** Connects a real MCP client with `token`, retrying while the token's one slot is taken, for at most `ms`. */
  async function connectWithin(token: string, ms: number) {
    const started = performance.now();
    for (;;) {
      try {
        return { client: await mcpClient(service, token), waited: performance.now() - started };
      } catch (error) {
        if (!/429|RATE_LIMITED/.test(String(error)) || performance.now() - started > ms) throw error;
        await sleep(100);
      }
    }
  }

  it("a client that dies without DELETE frees its token's slot once the session has been idle, and its session id is then 404", {
    timeout: 20_000,
  }, async () => {
    const token = await makeToken(project, ["--agent", "crashy"]);
    const dead = await mcpClient(service, token);
    assert.equal((await dead.call("arbeit_query", { query: "tasks" })).success, true);
    const session = dead.transport.sessionId!;
    // Its connections close, as a killed process's do; no DELETE /mcp is sent.
    await dead.close();
    await assert.rejects(mcpClient(service, token), /429|RATE_LIMITED/, "the slot is held at first");
    const { client, waited } = await connectWithin(token, 8_000);
    try {
      assert.ok(waited >= 500, `freed after ${waited} ms, before the session was idle for long`);
      assert.equal((await client.call("arbeit_query", { query: "tasks" })).success, true);
    } finally {
      await client.close();
    }
    const stale = await fetch(`${service.url}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
        "Mcp-Session-Id": session,
        "Mcp-Protocol-Version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(stale.status, 404);
  });

  it("a live client is never expired: idle between calls for longer than the idle time, it goes on working", {
    timeout: 20_000,
  }, async () => {
    const token = await makeToken(project, ["--agent", "steady"]);
    const live = await mcpClient(service, token);
    try {
      assert.equal((await live.call("arbeit_query", { query: "tasks" })).success, true);
      // It keeps its stream open (the SDK client listens on GET /mcp), as a running client does.
      await sleep(2_500);
      assert.equal((await live.call("arbeit_task_create", { title: "After a pause" })).success, true);
      await assert.rejects(mcpClient(service, token), /429|RATE_LIMITED/, "its session still holds the slot");
    } finally {
      await live.transport.terminateSession();
      await live.close();
    }
  });
});
