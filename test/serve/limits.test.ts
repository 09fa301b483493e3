import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import {
  apiCall,
  apiHook,
  type HttpAnswer,
  makeToken,
  mcpClient,
  promptStep,
  type Service,
  startService,
} from "./harness.js";

/** Limits per token and per address, each met against the real `arbeit serve` process. */

/** A project with the tokens alice and bob, and `arbeit serve` started in it with `args`, for a describe block. */
function serviceWith(args: string[]) {
  const run = {} as { project: UiProject; service: Service; alice: string; bob: string };
  before(async () => {
    run.project = await uiProject("sqlite");
    run.alice = await makeToken(run.project, ["--agent", "alice"]);
    run.bob = await makeToken(run.project, ["--agent", "bob"]);
    run.service = await startService(run.project, args);
  });
  after(async () => {
    await run.service?.stop("SIGKILL");
    await run.project?.close();
  });
  return run;
}

const query = { tool: "arbeit_query", args: { query: "tasks" } };

function assertRateLimited(answer: { status: number; body: any; headers: Headers }) {
  assert.equal(answer.status, 429, JSON.stringify(answer.body));
  assert.equal(answer.body.success, false);
  assert.equal(answer.body.error.code, "RATE_LIMITED");
  assert.match(answer.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  assert.ok(answer.body.error.suggestions.length > 0);
}

describe("arbeit serve --rate 1 --burst 3: requests per token", () => {
  const run = serviceWith(["--rate", "1", "--burst", "3"]);

  it("a burst past the limit gets 429 RATE_LIMITED with Retry-After, nothing is done, and other tokens are not held back", async () => {
    const { project, service, alice, bob } = run;
    const answers = await Promise.all([1, 2, 3].map(() => apiCall(service, alice, query)));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200],
    );
    const over = await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Over the limit" } });
    assertRateLimited(over);
    const other = await apiCall(service, bob, query);
    assert.equal(other.status, 200);
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(!titles.includes("Over the limit"), titles.join(", "));
    assert.match(service.stderr(), /alice POST \/api\/call arbeit_task_create 429 RATE_LIMITED/);
  });
});

describe("arbeit serve --rate 1 --burst 3: every endpoint that acts counts", () => {
  const run = serviceWith(["--rate", "1", "--burst", "3"]);

  it("hook steps on /api/hook are limited like calls: past the burst 429 RATE_LIMITED, and the step does nothing", async () => {
    const { project, service } = run;
    const hooker = await makeToken(project, ["--agent", "hooker"]);
    const prompt = (text: string) => apiHook(service, hooker, promptStep("hooker-1", text));
    const answers = await Promise.all(["one", "two", "three"].map(prompt));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200],
    );
    const over = await prompt("Over the limit");
    assertRateLimited(over);
    const exported = await runCli(["export", "-"], { cwd: project.dir, env: project.env });
    assert.doesNotMatch(exported.stdout, /Over the limit/);
    assert.match(service.stderr(), /hooker POST \/api\/hook - 429 RATE_LIMITED/);
  });

  it("tool calls over /mcp are limited: a real MCP client is refused with 429 past the burst, and the refused calls write nothing", async () => {
    const { project, service } = run;
    const mcp = await mcpClient(service, await makeToken(project, ["--agent", "streamer"]));
    const outcomes: string[] = [];
    try {
      for (let i = 1; i <= 5; i++)
        outcomes.push(
          await mcp.call("arbeit_task_create", { title: `Over MCP ${i}` }).then(
            (envelope) => (envelope.success ? "ok" : envelope.error.code),
            (error: Error) => (/429|RATE_LIMITED/.test(error.message) ? "429" : error.message),
          ),
        );
    } finally {
      await mcp.close();
    }
    assert.ok(outcomes.includes("429"), outcomes.join(", "));
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.deepEqual(
      outcomes.map((_, i) => titles.includes(`Over MCP ${i + 1}`)),
      outcomes.map((outcome) => outcome === "ok"),
      `${outcomes.join(", ")}: ${titles.join(", ")}`,
    );
  });
});

describe("arbeit serve --rate 1 --burst 6: the limit counts calls, not requests", () => {
  const run = serviceWith(["--rate", "1", "--burst", "6"]);

  /** A POST to /mcp as a client that writes JSON-RPC by hand: its status, body text and session id. */
  const mcpPost = async (token: string, body: unknown, session?: string) => {
    const response = await fetch(`${run.service.url}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
        ...(session ? { "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18" } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, session: response.headers.get("mcp-session-id") ?? undefined };
  };
  const create = (title: string, id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "arbeit_task_create", arguments: { title } },
  });
  const titles = async () =>
    (await run.project.cli(["call", "arbeit_query", '{"query": "tasks", "params": {"limit": 500}}'])).tasks.map(
      (task: { title: string }) => task.title,
    );

  it("each message of a JSON-RPC batch on /mcp counts: a batch past what is left is 429 and runs none of its calls", async () => {
    const token = await makeToken(run.project, ["--agent", "batcher"]);
    const opened = await mcpPost(token, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "by-hand", version: "1" } },
    });
    assert.equal(opened.status, 200, opened.text);
    const session = opened.session!;
    assert.equal((await mcpPost(token, { jsonrpc: "2.0", method: "notifications/initialized" }, session)).status, 202);
    // Two of six spent: a batch of three fits, a further batch of four does not.
    const fits = await mcpPost(
      token,
      [1, 2, 3].map((i) => create(`Batched ${i}`, i)),
      session,
    );
    assert.equal(fits.status, 200, fits.text);
    const over = await mcpPost(
      token,
      [4, 5, 6, 7].map((i) => create(`Batched ${i}`, i)),
      session,
    );
    assert.equal(over.status, 429, over.text);
    assert.equal(JSON.parse(over.text).error.code, "RATE_LIMITED");
    // More calls than the burst itself can never be made at once: refused as too large, not to be retried.
    const never = await mcpPost(
      token,
      [8, 9, 10, 11, 12, 13, 14].map((i) => create(`Batched ${i}`, i)),
      session,
    );
    assert.equal(never.status, 413, never.text);
    assert.equal(JSON.parse(never.text).error.code, "INPUT_TOO_LARGE");
    const made = (await titles()).filter((title: string) => title.startsWith("Batched "));
    assert.deepEqual(made.sort(), ["Batched 1", "Batched 2", "Batched 3"]);
  });

  it("each operation of arbeit_batch counts as a call, on /api/call and over /mcp", async () => {
    const token = await makeToken(run.project, ["--agent", "bulk"]);
    const batch = (prefix: string, count: number) => ({
      tool: "arbeit_batch",
      args: {
        operations: Array.from({ length: count }, (_, i) => ({
          tool: "arbeit_task_create",
          args: { title: `${prefix} ${i + 1}` },
        })),
      },
    });
    const fits = await apiCall(run.service, token, batch("Bulk", 4));
    assert.equal(fits.body.success, true, JSON.stringify(fits.body));
    assertRateLimited(await apiCall(run.service, token, batch("Bulk over", 4)));
    const never = await apiCall(run.service, token, batch("Bulk never", 7));
    assert.deepEqual([never.status, never.body.error.code], [413, "INPUT_TOO_LARGE"]);
    const mcp = await mcpClient(run.service, await makeToken(run.project, ["--agent", "bulk-mcp"]));
    try {
      await assert.rejects(mcp.call("arbeit_batch", batch("Bulk over MCP", 7).args), /413|INPUT_TOO_LARGE|more calls/);
    } finally {
      await mcp.close();
    }
    const made = (await titles()).filter((title: string) => title.startsWith("Bulk"));
    assert.deepEqual(made.sort(), ["Bulk 1", "Bulk 2", "Bulk 3", "Bulk 4"]);
  });
});

describe("arbeit serve --max-sessions 1: open MCP sessions per token", () => {
  const run = serviceWith(["--max-sessions", "1"]);

  it("a second session of one token is refused with 429 until the first is closed; another token opens its own", async () => {
    const { service, alice, bob } = run;
    const first = await mcpClient(service, alice);
    await assert.rejects(mcpClient(service, alice), /429|RATE_LIMITED|open MCP sessions/);
    const other = await mcpClient(service, bob);
    assert.equal((await other.call("arbeit_query", { query: "tasks" })).success, true);
    await first.transport.terminateSession();
    await first.close();
    const again = await mcpClient(service, alice);
    assert.equal((await again.call("arbeit_query", { query: "tasks" })).success, true);
    await again.close();
    await other.close();
  });
});

describe("arbeit serve: repeated wrong tokens from one address", () => {
  const run = serviceWith([]);

  it("are answered ever later with 401, while the service answers other requests meanwhile", {
    timeout: 30_000,
  }, async () => {
    const { service, alice } = run;
    const wrong = `${alice.slice(0, -4)}xxxx`;
    for (let i = 0; i < 4; i++) assert.equal((await apiCall(service, wrong, query)).status, 401);
    // The fifth guess waits its delay; a request sent after it is answered first.
    let guessAnswered = false;
    const guess = apiCall(service, wrong, query).then((answer) => {
      guessAnswered = true;
      return answer;
    });
    const health = await fetch(`${service.url}/healthz`);
    assert.equal(health.status, 200);
    const call = await apiCall(service, alice, { tool: "arbeit_task_create", args: { title: "Meanwhile" } });
    assert.equal(call.body.success, true, JSON.stringify(call.body));
    assert.equal(guessAnswered, false, "the guess was answered before requests sent after it");
    const refused = await guess;
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, "UNAUTHORIZED");
  });

  it("sent all at once, queue up one after another; past the queue's length they are refused 429 at once", {
    timeout: 30_000,
  }, async () => {
    const { service, alice } = run;
    const wrong = `${alice.slice(0, -4)}yyyy`;
    const answers: HttpAnswer[] = [];
    for (let i = 0; i < 12; i++)
      // The queue's head is still waiting when the service stops: that request just fails.
      apiCall(service, wrong, query).then(
        (answer) => answers.push(answer),
        () => {},
      );
    // The queue's tail is refused before its head has waited its turn.
    const refused = () => answers.find((answer) => answer.status === 429);
    while (!refused() && answers.length < 12) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(refused(), "no guess was refused");
    const statuses = answers.map((answer) => answer.status);
    assert.ok(statuses.filter((status) => status === 401).length < 3, statuses.join(", "));
    assertRateLimited(refused()!);
  });
});
