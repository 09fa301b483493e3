import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { clientRange } from "../../src/domain/client-versions.js";
import { TOOL_NAMES } from "../../src/tools/catalogue.js";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { apiCall, makeToken, mcpClient, RELEASE, type Service, startService } from "./harness.js";

type Call = (tool: string, args: Record<string, unknown>) => Promise<any>;

/**
 * Calls every tool of the catalogue once, in a small real workflow, through `call`; returns each
 * tool's envelope. arbeit_init is the one that fails: the service's project exists already.
 */
async function everyTool(call: Call): Promise<Map<string, any>> {
  const seen = new Map<string, any>();
  const run = async (tool: string, args: Record<string, unknown>) => {
    const envelope = await call(tool, args);
    seen.set(tool, envelope);
    return envelope;
  };
  await run("arbeit_init", {});
  const a = (await run("arbeit_task_create", { title: "Remote task A" })).data.task.id;
  const b = (await call("arbeit_task_create", { title: "Remote task B" })).data.task.id;
  await run("arbeit_task_get", { task_id: a });
  await run("arbeit_task_update", { task_id: a, description: "over HTTP" });
  await run("arbeit_task_claim", { task_id: a });
  await run("arbeit_task_start_work", { task_id: a });
  await run("arbeit_context_add", { task_id: a, type: "decision", content: "Serve it" });
  const item = (await run("arbeit_progress_add", { task_id: a, items: ["one"] })).data.items[0].id;
  await run("arbeit_progress_complete", { item_ids: [item] });
  await run("arbeit_relationship", { action: "add", from_task_id: a, to_task_id: b, type: "relates_to" });
  await run("arbeit_query", { query: "tasks" });
  await run("arbeit_resume", {});
  await run("arbeit_memory", { action: "set", key: "remote", value: true });
  await run("arbeit_batch", { operations: [{ tool: "arbeit_task_create", args: { title: "In a batch" } }] });
  await run("arbeit_task_stop_work", { task_id: a });
  await run("arbeit_task_delete", { task_id: b });
  return seen;
}

function rawRequest(
  service: Service,
  headers: Record<string, string>,
  body = "{}",
): Promise<{ status: number; body: any }> {
  const url = new URL(service.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: "/api/call",
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`arbeit serve on ${engine}`, { skip: engine === "postgres" ? await postgresSkip() : false }, () => {
    let project: UiProject;
    let service: Service;
    let alice: string;
    let carol: string;
    let reader: string;
    const events = async () =>
      (await project.cli(["call", "arbeit_query", '{"query": "events", "params": {"limit": 1000}}'])).events;

    before(async () => {
      project = await uiProject(engine);
      alice = await makeToken(project, ["--agent", "alice"]);
      carol = await makeToken(project, ["--person", "carol"]);
      reader = await makeToken(project, ["--agent", "watcher", "--read-only"]);
      service = await startService(project);
    });
    after(async () => {
      await service?.stop("SIGKILL");
      await project?.close();
    });

    it("GET /healthz answers without a token and says the store answers", async () => {
      const response = await fetch(`${service.url}/healthz`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), {
        success: true,
        data: { ok: true, store: "ok", version: RELEASE, clients: clientRange(RELEASE).text },
      });
    });

    it("a missing, wrong or revoked token gets 401, the same for each, naming no one", async () => {
      const gone = await makeToken(project, ["--agent", "gone"]);
      await runCli(["token", "revoke", "gone"], { cwd: project.dir, env: project.env });
      const call = { tool: "arbeit_query", args: { query: "tasks" } };
      const missing = await apiCall(service, undefined, call);
      const wrong = await apiCall(service, `${alice.slice(0, -2)}xx`, call);
      const revoked = await apiCall(service, gone, call);
      assert.deepEqual([missing.status, wrong.status, revoked.status], [401, 401, 401]);
      assert.equal(missing.body.error.code, "UNAUTHORIZED");
      assert.deepEqual(wrong.body, revoked.body);
      assert.doesNotMatch(JSON.stringify(revoked.body), /gone|revoked/);
      assert.equal(revoked.headers.get("www-authenticate"), "Bearer");
    });

    it("a token that has been making calls is refused on its very next call and hook once revoked, and writes nothing", async () => {
      const busy = await makeToken(project, ["--agent", "busy"]);
      const hook = (title: string) =>
        fetch(`${service.url}/api/hook`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${busy}`, "Arbeit-Version": RELEASE },
          body: JSON.stringify({
            hook: "track-files",
            session: "busy-1",
            input: { touches: [{ path: `src/${title}.ts`, operation: "write" }] },
          }),
        });
      const create = (title: string) =>
        apiCall(service, busy, { tool: "arbeit_task_create", args: { title }, session: "busy-1" });
      // Known to the service, and so no longer read before each request.
      for (const title of ["Before 1", "Before 2"]) assert.equal((await create(title)).body.success, true);
      assert.equal((await hook("before")).status, 200);
      const revoked = await runCli(["token", "revoke", "busy"], { cwd: project.dir, env: project.env });
      assert.equal(revoked.code, 0, revoked.stdout);
      const write = await create("After the revocation");
      const read = await apiCall(service, busy, { tool: "arbeit_query", args: { query: "tasks" } });
      const refusedByRules = await apiCall(service, busy, { tool: "arbeit_task_get", args: {}, session: "agent:x" });
      const hooked = await hook("after");
      assert.deepEqual([write.status, read.status, refusedByRules.status, hooked.status], [401, 401, 401, 401]);
      assert.equal(write.body.error.code, "UNAUTHORIZED");
      const titles = (
        await project.cli(["call", "arbeit_query", '{"query": "tasks", "params": {"limit": 500}}'])
      ).tasks.map((task: { title: string }) => task.title);
      assert.ok(titles.includes("Before 2"));
      assert.ok(!titles.includes("After the revocation"));
    });

    it("a token revoked between two calls has its next task create refused, and the task is not created", async () => {
      const quick = await makeToken(project, ["--agent", "quick"]);
      // In the agent's own session: nothing but the token is left to check, and the write's COMMIT
      // may leave before the check's answer (on Postgres): the check must undo the write itself.
      const create = (title: string) => apiCall(service, quick, { tool: "arbeit_task_create", args: { title } });
      assert.equal((await create("Quick before")).body.success, true);
      assert.equal((await runCli(["token", "revoke", "quick"], { cwd: project.dir, env: project.env })).code, 0);
      const refused = await create("Quick after the revocation");
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body.error.code, "UNAUTHORIZED");
      const titles = (
        await project.cli(["call", "arbeit_query", '{"query": "tasks", "params": {"limit": 500}}'])
      ).tasks.map((task: { title: string }) => task.title);
      assert.ok(titles.includes("Quick before"));
      assert.ok(!titles.includes("Quick after the revocation"), "the refused create wrote its task");
    });

    it("a revoked token's resume is refused and leaves the session's cursor where it was", async () => {
      const resumer = await makeToken(project, ["--agent", "resumer"]);
      const resume = () => apiCall(service, resumer, { tool: "arbeit_resume", args: {}, session: "resumer-1" });
      const first = await resume();
      assert.equal(first.body.success, true, JSON.stringify(first.body));
      const cursor = first.body.data.cursor.current;
      // Events after that cursor, which a resume would move it past.
      await project.cli(["call", "arbeit_task_create", '{"title": "Made while the resumer was away"}']);
      assert.equal((await runCli(["token", "revoke", "resumer"], { cwd: project.dir, env: project.env })).code, 0);
      const refused = await resume();
      assert.equal(refused.status, 401);
      const peek = await project.cli(["call", "arbeit_resume", '{"peek": true}', "--session", "resumer-1"]);
      assert.equal(peek.cursor.previous, cursor);
      const newest = Math.max(...(await events()).map((event: { seq: number }) => event.seq));
      assert.ok(newest > cursor, `events up to ${newest}, none after the cursor ${cursor}`);
    });

    it("every tool works over POST /api/call", async () => {
      const seen = await everyTool(async (tool, args) => {
        const answer = await apiCall(service, alice, { tool, args, session: "laptop-1" });
        assert.equal(answer.status, 200);
        return answer.body;
      });
      assert.deepEqual([...seen.keys()].sort(), [...TOOL_NAMES].sort());
      for (const [tool, envelope] of seen)
        if (tool === "arbeit_init") assert.equal(envelope.error.code, "ALREADY_INITIALIZED");
        else assert.equal(envelope.success, true, `${tool}: ${JSON.stringify(envelope)}`);
    });

    it("every tool works over /mcp with the MCP SDK's Streamable HTTP client", async () => {
      const mcp = await mcpClient(service, alice);
      try {
        const listed = (await mcp.client.listTools()).tools.map((tool) => tool.name);
        assert.deepEqual(listed, [...TOOL_NAMES]);
        const seen = await everyTool((tool, args) => mcp.call(tool, args));
        assert.deepEqual([...seen.keys()].sort(), [...TOOL_NAMES].sort());
        for (const [tool, envelope] of seen)
          if (tool === "arbeit_init") assert.equal(envelope.error.code, "ALREADY_INITIALIZED");
          else assert.equal(envelope.success, true, `${tool}: ${JSON.stringify(envelope)}`);
      } finally {
        await mcp.close();
      }
    });

    it("answers the same envelopes as `arbeit call` on the same store", async () => {
      const task = (await project.cli(["call", "arbeit_task_create", '{"title": "Compared"}'])).task.id;
      const mcp = await mcpClient(service, alice);
      try {
        for (const [tool, args] of [
          ["arbeit_task_get", { task_id: task }],
          ["arbeit_task_get", { task_id: "tkt-zzzzzzzz" }],
          ["arbeit_query", { query: "descendants_of", params: { task_id: task } }],
          ["arbeit_query", { query: "templates" }],
        ] as const) {
          const local = await runCli(["call", tool, JSON.stringify(args)], { cwd: project.dir, env: project.env });
          const remote = await apiCall(service, alice, { tool, args });
          assert.deepEqual(remote.body, local.json, `${tool} over /api/call`);
          assert.deepEqual(await mcp.call(tool, args), local.json, `${tool} over /mcp`);
        }
      } finally {
        await mcp.close();
      }
    });

    it("an agent token cannot act as another agent or a person, write another's memory, force a release or answer a question", async () => {
      const task = (await apiCall(service, carol, { tool: "arbeit_task_create", args: { title: "Held by carol" } }))
        .body.data.task.id;
      await apiCall(service, carol, { tool: "arbeit_task_claim", args: { task_id: task }, session: "carol-desk" });
      const before = (await events()).length;
      const refusals = [
        await apiCall(service, alice, { tool: "arbeit_query", args: { query: "tasks" }, session: "agent:bob" }),
        await apiCall(service, alice, { tool: "arbeit_resume", args: { session: "agent:human:carol" } }),
        await apiCall(service, alice, {
          tool: "arbeit_task_claim",
          args: { action: "release", task_id: task },
          session: "carol-desk",
        }),
        await apiCall(service, alice, { tool: "arbeit_resume", args: { session: "carol-desk" } }),
        await apiCall(service, alice, {
          tool: "arbeit_memory",
          args: { action: "set", scope: "agent", scope_id: "bob", key: "k", value: 1 },
        }),
        await apiCall(service, alice, {
          tool: "arbeit_task_claim",
          args: { action: "release", task_id: task, force: true },
        }),
        await apiCall(service, alice, {
          tool: "arbeit_task_update",
          args: { task_id: task, status: "cancelled", force: true },
        }),
        await apiCall(service, alice, { tool: "arbeit_task_delete", args: { task_id: task, force: true } }),
        await apiCall(service, alice, {
          tool: "arbeit_context_add",
          args: { task_id: task, type: "user_input", content: "yes" },
        }),
        await apiCall(service, alice, {
          tool: "arbeit_batch",
          args: {
            operations: [{ tool: "arbeit_context_add", args: { task_id: task, type: "user_input", content: "y" } }],
          },
        }),
      ];
      for (const refusal of refusals) {
        assert.equal(refusal.status, 200);
        assert.equal(refusal.body.error?.code, "FORBIDDEN", JSON.stringify(refusal.body).slice(0, 300));
      }
      const named = await apiCall(service, alice, { tool: "arbeit_query", args: { query: "tasks" }, agent: "bob" });
      assert.equal(named.status, 400);
      assert.equal(named.body.error.code, "INVALID_ARGUMENT");
      const mcp = await mcpClient(service, alice);
      try {
        const forced = await mcp.call("arbeit_task_claim", { action: "release", task_id: task, force: true });
        assert.equal(forced.error.code, "FORBIDDEN");
      } finally {
        await mcp.close();
      }
      assert.equal((await events()).length, before, "nothing was written");
      const created = (await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Mine" } })).body.data
        .task;
      const log = (await events()).filter((event: any) => event.task_id === created.id);
      assert.deepEqual(
        log.map((event: any) => event.agent),
        ["alice"],
      );
    });

    it("a person token acts as human:<name>, may break a claim and answer a question; events name the token", async () => {
      const task = (await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Claimed by alice" } }))
        .body.data.task.id;
      await apiCall(service, alice, { tool: "arbeit_task_claim", args: { task_id: task } });
      const forced = await apiCall(service, carol, {
        tool: "arbeit_task_claim",
        args: { action: "release", task_id: task, force: true },
      });
      assert.equal(forced.body.success, true, JSON.stringify(forced.body));
      const answer = await apiCall(service, carol, {
        tool: "arbeit_context_add",
        args: { task_id: task, type: "user_input", content: "Go ahead" },
      });
      assert.equal(answer.body.success, true, JSON.stringify(answer.body));
      const log = (await events()).filter((event: any) => event.task_id === task);
      assert.deepEqual(
        log.map((event: any) => [event.event_type, event.agent]),
        [
          ["task_created", "alice"],
          ["task_claimed", "alice"],
          ["claim_released", "human:carol"],
          ["context_added", "human:carol"],
        ],
      );
      const ids = Object.fromEntries(
        (await runCli(["token", "list", "--json"], { cwd: project.dir, env: project.env })).json.data.tokens.map(
          (t: any) => [t.name, t.id],
        ),
      );
      assert.deepEqual(
        log.map((event: any) => event.payload.token_id),
        [ids.alice, ids.alice, ids.carol, ids.carol],
        "every event names the token it was written with",
      );
    });

    it("a read-only token reads and writes nothing, over /api/call and /mcp", async () => {
      const before = (await events()).length;
      const read = await apiCall(service, reader, { tool: "arbeit_query", args: { query: "tasks" } });
      assert.equal(read.body.success, true);
      const write = await apiCall(service, reader, { tool: "arbeit_task_create", args: { title: "No" } });
      assert.equal(write.body.error.code, "FORBIDDEN");
      const mcp = await mcpClient(service, reader);
      try {
        assert.equal((await mcp.call("arbeit_memory", { action: "set", key: "k", value: 1 })).error.code, "FORBIDDEN");
        assert.equal((await mcp.call("arbeit_resume", {})).error.code, "FORBIDDEN");
        assert.equal((await mcp.call("arbeit_task_get", { task_id: "tkt-zzzzzzzz" })).error.code, "TASK_NOT_FOUND");
      } finally {
        await mcp.close();
      }
      assert.equal((await events()).length, before);
    });

    it("a read-only token may peek with arbeit_resume (the cursor stays), not resume, over /api/call and /mcp", async () => {
      const before = (await events()).length;
      const peeked = await apiCall(service, reader, { tool: "arbeit_resume", args: { peek: true } });
      assert.equal(peeked.body.success, true, JSON.stringify(peeked.body).slice(0, 300));
      assert.equal(peeked.body.data.cursor.advanced, false);
      const moved = await apiCall(service, reader, { tool: "arbeit_resume", args: { peek: false } });
      assert.equal(moved.body.error.code, "FORBIDDEN");
      const mcp = await mcpClient(service, reader);
      try {
        assert.equal((await mcp.call("arbeit_resume", { peek: true })).success, true);
      } finally {
        await mcp.close();
      }
      assert.equal((await events()).length, before, "nothing was written");
    });

    it("a default list in the request is the caller's list: creates land in it, reads are scoped to it", async () => {
      const made = await apiCall(service, alice, {
        tool: "arbeit_task_create",
        args: { title: "In list one" },
        list: "list-one",
      });
      assert.equal(made.body.data.task.list_id, "list-one", JSON.stringify(made.body).slice(0, 300));
      const scoped = await apiCall(service, alice, {
        tool: "arbeit_query",
        args: { query: "tasks" },
        list: "list-one",
      });
      assert.deepEqual(
        scoped.body.data.tasks.map((task: any) => task.title),
        ["In list one"],
      );
      const before = (await events()).length;
      for (const list of ["no spaces", 7]) {
        const refused = await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "No" }, list });
        assert.equal(refused.status, 400);
        assert.equal(refused.body.error.code, "INVALID_ARGUMENT");
        assert.match(refused.body.error.message, /^list /);
      }
      assert.equal((await events()).length, before, "nothing was written");
    });

    it("a session known only by what it wrote (events, no resume state) belongs to its agent: another agent's token cannot take it", async () => {
      const bob = await makeToken(project, ["--agent", "bob-history"]);
      const made = await apiCall(service, alice, {
        tool: "arbeit_task_create",
        args: { title: "Written in alice-history" },
        session: "alice-history",
      });
      assert.equal(made.body.success, true, JSON.stringify(made.body).slice(0, 300));
      const before = (await events()).length;
      const taken = await apiCall(service, bob, {
        tool: "arbeit_task_create",
        args: { title: "Bob in alice's session" },
        session: "alice-history",
      });
      assert.equal(taken.body.error?.code, "FORBIDDEN", JSON.stringify(taken.body).slice(0, 300));
      const read = await apiCall(service, bob, { tool: "arbeit_resume", args: {}, session: "alice-history" });
      assert.equal(read.body.error?.code, "FORBIDDEN");
      assert.equal((await events()).length, before, "nothing was written");
      const own = await apiCall(service, alice, { tool: "arbeit_resume", args: {}, session: "alice-history" });
      assert.equal(own.body.success, true);
    });

    it("a revoked token is refused in the middle of an MCP session", async () => {
      const secret = await makeToken(project, ["--agent", "laptop-lost"]);
      const mcp = await mcpClient(service, secret);
      try {
        assert.equal((await mcp.call("arbeit_query", { query: "tasks" })).success, true);
        const revoked = await runCli(["token", "revoke", "laptop-lost"], { cwd: project.dir, env: project.env });
        assert.equal(revoked.code, 0, revoked.stdout);
        await assert.rejects(
          mcp.call("arbeit_task_create", { title: "After revocation" }),
          /401|Unauthorized|not valid/i,
        );
      } finally {
        await mcp.close().catch(() => {});
      }
      const titles = (await project.cli(["call", "arbeit_query", '{"query": "tasks"}'])).tasks.map((t: any) => t.title);
      assert.ok(!titles.includes("After revocation"));
    });

    // Bounded: without the service closing the session, the stream would stay open for ever.
    it("revoking a token ends the open MCP event stream of its session", { timeout: 30_000 }, async () => {
      const secret = await makeToken(project, ["--agent", "listener"]);
      const headers = {
        Authorization: `Bearer ${secret}`,
        Accept: "application/json, text/event-stream",
        "Content-Type": "application/json",
      };
      const initialize = await fetch(`${service.url}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        }),
      });
      assert.equal(initialize.status, 200);
      await initialize.text();
      const session = initialize.headers.get("mcp-session-id")!;
      const withSession = { ...headers, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18" };
      await fetch(`${service.url}/mcp`, {
        method: "POST",
        headers: withSession,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      });
      const stream = await fetch(`${service.url}/mcp`, { method: "GET", headers: withSession });
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get("content-type") ?? "", /text\/event-stream/);
      const reader = stream.body!.getReader();
      await runCli(["token", "revoke", "listener"], { cwd: project.dir, env: project.env });
      // The stream ends by itself: the service closes a session whose token stopped working.
      while (!(await reader.read().catch(() => ({ done: true }))).done);
      const after = await fetch(`${service.url}/mcp`, { method: "GET", headers: withSession });
      assert.equal(after.status, 401);
    });

    it("MCP calls act in the session X-Arbeit-Session names, else in the MCP session", async () => {
      const named = await mcpClient(service, alice, { "X-Arbeit-Session": "claude-conversation-1" });
      const plain = await mcpClient(service, alice);
      try {
        const a = (await named.call("arbeit_task_create", { title: "In a named session" })).data.task.id;
        const b = (await plain.call("arbeit_task_create", { title: "In the MCP session" })).data.task.id;
        const sessions = new Map((await events()).map((event: any) => [event.task_id, event.session_id]));
        assert.equal(sessions.get(a), "claude-conversation-1");
        assert.equal(sessions.get(b), plain.transport.sessionId);
        assert.match(plain.transport.sessionId ?? "", /^mcp-/);
      } finally {
        await named.close();
        await plain.close();
      }
    });

    it("refuses a foreign Host or Origin (DNS rebinding) and a body over the limit", async () => {
      const host = await rawRequest(service, { Host: "attacker.example:80", Authorization: `Bearer ${alice}` });
      assert.equal(host.status, 403);
      assert.equal(host.body.error.code, "FORBIDDEN");
      const origin = await apiCall(
        service,
        alice,
        { tool: "arbeit_query", args: { query: "tasks" } },
        { Origin: "http://attacker.example" },
      );
      assert.equal(origin.status, 403);
      const mcpOrigin = await fetch(`${service.url}/mcp`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${alice}`,
          Origin: "http://attacker.example",
          "Content-Type": "application/json",
        },
        body: "{}",
      });
      assert.equal(mcpOrigin.status, 403);
      const big = await apiCall(service, alice, {
        tool: "arbeit_task_create",
        args: { title: "x".repeat(5 * 1024 * 1024) },
      });
      assert.equal(big.status, 413);
      assert.equal(big.body.error.code, "INPUT_TOO_LARGE");
    });

    it("logs one line per request: who, tool, status; token list shows when a token was last used", async () => {
      assert.match(service.stderr(), /alice POST \/api\/call arbeit_task_create 200 ok [\d.]+ms/);
      assert.match(service.stderr(), /- POST \/api\/call - 401 UNAUTHORIZED/);
      const listed = await runCli(["token", "list", "--json"], { cwd: project.dir, env: project.env });
      const used = Object.fromEntries(listed.json.data.tokens.map((t: any) => [t.name, t.last_used_at !== null]));
      assert.equal(used.alice, true);
      assert.equal(used.gone, false);
    });

    it("an MCP session answers only the token that opened it", async () => {
      const mcp = await mcpClient(service, alice);
      try {
        const other = await fetch(`${service.url}/mcp`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${carol}`,
            "Mcp-Session-Id": mcp.transport.sessionId!,
            Accept: "application/json, text/event-stream",
            "Content-Type": "application/json",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
        });
        assert.equal(other.status, 403);
        assert.equal(((await other.json()) as any).error.code, "FORBIDDEN");
      } finally {
        await mcp.close();
      }
    });

    it("on SIGTERM finishes the call in flight, then exits 0; what it wrote is there after a restart", async () => {
      const url = new URL(service.url);
      const body = JSON.stringify({ tool: "arbeit_task_create", args: { title: "Written during shutdown" } });
      const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: "/api/call",
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              "Content-Length": Buffer.byteLength(body),
              Authorization: `Bearer ${alice}`,
            },
          },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (chunk) => (text += chunk));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on("error", reject);
        // Half the body now, the rest once the service was told to stop: the call is in flight.
        req.write(body.slice(0, 20));
        setTimeout(() => {
          const exit = service.stop("SIGTERM");
          setTimeout(() => req.end(body.slice(20)), 200);
          exited = exit;
        }, 300);
      });
      let exited: Promise<number | string> | undefined;
      const answer = await answered;
      assert.equal(answer.status, 200, answer.text);
      const task = JSON.parse(answer.text).data.task;
      assert.equal(await exited, 0, service.stderr());

      service = await startService(project);
      const again = await apiCall(service, alice, { tool: "arbeit_task_get", args: { task_id: task.id } });
      assert.equal(again.body.data.task.title, "Written during shutdown");
      const doctor = await runCli(["doctor", "--json"], { cwd: project.dir, env: project.env });
      assert.equal(doctor.code, 0, `arbeit doctor on what the service wrote: ${doctor.stdout}`);
    });
  });
}

describe("arbeit serve on an address other machines reach", () => {
  let project: UiProject;
  before(async () => {
    project = await uiProject("sqlite");
  });
  after(() => project?.close());

  it("refuses without TLS or --insecure-no-tls (usage error, exit 2)", async () => {
    const result = await runCli(["serve", "--host", "0.0.0.0", "--port", "0"], { cwd: project.dir });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--insecure-no-tls/);
  });

  it("with --insecure-no-tls it serves, and warns that tokens cross the network in clear text", async () => {
    const service = await startService(project, ["--host", "0.0.0.0", "--insecure-no-tls"]);
    try {
      const port = new URL(service.url).port;
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
      assert.match(service.stderr(), /WARNING: listening on 0\.0\.0\.0 without TLS/);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });
});
