import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { receiver } from "../notify/receiver.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { apiCall, makeToken, mcpClient, type Service, startService } from "./harness.js";

/**
 * Running the service (docs/team.md#running-the-service): the request log with the client's
 * address, as text or as JSON, and GET /metrics, on the real `arbeit serve` process.
 */

/** The log's request lines so far (the banner and shutdown lines left out). */
const requestLines = (service: Service) =>
  service
    .stderr()
    .split("\n")
    .filter((line) => line.startsWith("{") || /^\d{4}-\d\d-\d\dT/.test(line));

/** Waits (bounded) until `check` holds for the log, and returns the log's request lines. */
async function logUntil(service: Service, check: (lines: string[]) => boolean): Promise<string[]> {
  for (let waited = 0; !check(requestLines(service)) && waited < 5_000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return requestLines(service);
}

/** A sample's value in Prometheus text: the line `name{labels} value`, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((row) => row.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("the request log names the client's address, refusals included", () => {
  let project: UiProject;
  let service: Service;

  before(async () => {
    project = await uiProject("sqlite");
    service = await startService(project);
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  it("as text: a wrong token's 401 ends with the address it came from", async () => {
    const refused = await apiCall(service, "arb_not-a-token", { tool: "arbeit_query", args: { query: "ready" } });
    assert.equal(refused.status, 401);
    const lines = await logUntil(service, (all) => all.some((line) => line.includes(" 401 ")));
    const line = lines.find((row) => row.includes(" 401 "))!;
    assert.match(line, /^\S+Z - POST \/api\/call - 401 UNAUTHORIZED [\d.]+ms 127\.0\.0\.1$/);
  });

  it("refuses a log format it does not know, as a usage error", async () => {
    const bad = await runCli(["serve", "--port", "0", "--log-format", "xml"], { cwd: project.dir, env: project.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--log-format \(or ARBEIT_LOG_FORMAT\) is text or json, not "xml"/);
  });
});

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`arbeit serve with JSON logs and /metrics (${engine})`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let project: UiProject;
    let service: Service;
    let alice: string;
    let dana: string;
    let hook: Awaited<ReturnType<typeof receiver>>;
    const scrape = async (token: string | undefined) => {
      const response = await fetch(`${service.url}/metrics`, {
        headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
      });
      return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
    };

    before(async () => {
      project = await uiProject(engine);
      alice = await makeToken(project, ["--agent", "alice"]);
      dana = await makeToken(project, ["--person", "prometheus", "--read-only"]);
      hook = await receiver();
      await project.cli(["notify", "add", hook.url, "--allow-private", "--events", "question"]);
      // ARBEIT_LOG_FORMAT says it as well as the flag does.
      service = await startService({ ...project, env: { ...project.env, ARBEIT_LOG_FORMAT: "json" } });
    });
    after(async () => {
      await service?.stop("SIGKILL");
      await hook?.close();
      await project?.close();
    });

    it("writes each request as one JSON object: time, client, token name, method, path, tool, status, outcome, duration", async () => {
      const created = await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Logged" } });
      assert.equal(created.body.success, true);
      await apiCall(service, "arb_wrong", { tool: "arbeit_query", args: { query: "ready" } });
      const lines = await logUntil(service, (all) => all.length >= 2);
      const records = lines.map((line) => JSON.parse(line));
      const ok = records.find((record) => record.tool === "arbeit_task_create");
      assert.deepEqual(Object.keys(ok), [
        "time",
        "client",
        "token",
        "acts_as",
        "method",
        "path",
        "tool",
        "status",
        "outcome",
        "duration_ms",
      ]);
      assert.deepEqual(
        [ok.client, ok.token, ok.acts_as, ok.method, ok.path, ok.status, ok.outcome],
        ["127.0.0.1", "alice", "alice", "POST", "/api/call", 200, "ok"],
      );
      assert.equal(typeof ok.duration_ms, "number");
      assert.ok(!Number.isNaN(Date.parse(ok.time)));
      const refused = records.find((record) => record.status === 401);
      assert.deepEqual(
        [refused.client, refused.token, refused.acts_as, refused.outcome],
        ["127.0.0.1", null, null, "UNAUTHORIZED"],
      );
      assert.doesNotMatch(service.stderr(), new RegExp(alice));
    });

    it("/metrics answers a person's token; an agent's is FORBIDDEN, none is UNAUTHORIZED", async () => {
      const anonymous = await scrape(undefined);
      assert.equal(anonymous.status, 401);
      const agent = await scrape(alice);
      assert.equal(agent.status, 403);
      assert.equal(JSON.parse(agent.text).error.code, "FORBIDDEN");
      const person = await scrape(dana);
      assert.equal(person.status, 200);
      assert.match(person.type!, /^text\/plain; version=0\.0\.4/);
      assert.match(person.text, /^arbeit_build_info\{version="[\d.]+"\} 1$/m);
    });

    it("counts calls by tool and outcome, errors by code, and times requests by endpoint", async () => {
      const before = (await scrape(dana)).text;
      const created = sample(before, 'arbeit_calls_total{tool="arbeit_task_create",outcome="ok"}') ?? 0;
      await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Counted" } });
      await apiCall(service, alice, { tool: "arbeit_task_get", args: { task_id: "tkt-00000000" } });
      await apiCall(service, alice, { tool: "no_such_tool\nforged 1", args: {} });
      const text = (await scrape(dana)).text;
      assert.equal(sample(text, 'arbeit_calls_total{tool="arbeit_task_create",outcome="ok"}'), created + 1);
      assert.equal(sample(text, 'arbeit_calls_total{tool="arbeit_task_get",outcome="TASK_NOT_FOUND"}'), 1);
      assert.equal(sample(text, 'arbeit_errors_total{code="TASK_NOT_FOUND"}'), 1);
      // A name no catalogue holds is "other": a client cannot make series of its own.
      assert.equal(sample(text, 'arbeit_calls_total{tool="other",outcome="INVALID_ARGUMENT"}'), 1);
      assert.doesNotMatch(text, /no_such_tool|forged/);
      // The wrong token of the log's test, and the scrape without a token.
      assert.equal(sample(text, 'arbeit_errors_total{code="UNAUTHORIZED"}'), 2);
      const calls = sample(text, 'arbeit_request_duration_seconds_count{endpoint="/api/call"}')!;
      assert.ok(calls >= 5, `${calls}`);
      assert.equal(sample(text, 'arbeit_request_duration_seconds_bucket{endpoint="/api/call",le="+Inf"}'), calls);
      assert.ok(sample(text, 'arbeit_requests_total{endpoint="/api/call",status="200"}')! >= 3);
    });

    it("shows the MCP sessions open now", async () => {
      const mcp = await mcpClient(service, alice);
      try {
        assert.equal(sample((await scrape(dana)).text, "arbeit_mcp_sessions"), 1);
        // A client that ends its session (DELETE /mcp) frees it.
        await mcp.transport.terminateSession();
      } finally {
        await mcp.close();
      }
      assert.equal(sample((await scrape(dana)).text, "arbeit_mcp_sessions"), 0);
    });

    it("counts webhook deliveries by outcome", async () => {
      const task = (await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Ask" } })).body.data
        .task.id;
      const asked = await apiCall(service, alice, {
        tool: "arbeit_context_add",
        args: { task_id: task, type: "blocker", content: "Which currency?" },
      });
      assert.equal(asked.body.success, true, JSON.stringify(asked.body));
      await hook.until(1);
      let text = "";
      for (let waited = 0; waited < 5_000; waited += 50) {
        text = (await scrape(dana)).text;
        if (sample(text, 'arbeit_webhook_deliveries_total{outcome="delivered"}') === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(sample(text, 'arbeit_webhook_deliveries_total{outcome="delivered"}'), 1);
    });

    it(engine === "postgres" ? "shows the Postgres pool's use" : "shows no pool on SQLite", async () => {
      const text = (await scrape(dana)).text;
      if (engine === "sqlite") {
        assert.doesNotMatch(text, /arbeit_db_pool/);
        return;
      }
      assert.equal(sample(text, "arbeit_db_pool_max"), 10);
      const busy = sample(text, 'arbeit_db_pool_connections{state="busy"}')!;
      const idle = sample(text, 'arbeit_db_pool_connections{state="idle"}')!;
      assert.ok(busy + idle >= 1 && busy + idle <= 10, `${busy} busy, ${idle} idle`);
      assert.equal(sample(text, "arbeit_db_pool_waiting"), 0);
    });
  });
}
