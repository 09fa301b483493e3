import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { raw } from "../helpers/raw-http.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, type Service, startService } from "./harness.js";

/**
 * The request log of `arbeit serve` (its stderr, one line per request) is read in a terminal and
 * by tools that split it into lines and fields. Whatever a token holder sends (a tool's name, a
 * JSON-RPC method, the path) and whatever a token is named cannot add a line, hide one, or send
 * a terminal what it acts on: such text is written as a quoted, escaped field.
 */
describe("the request log of arbeit serve", () => {
  let project: UiProject;
  let service: Service & { origin: string };
  let alice: string;
  let odd: string;

  before(async () => {
    project = await uiProject("sqlite");
    alice = await makeToken(project, ["--agent", "alice"]);
    // An agent name may hold spaces and bidi controls: it is a name for people.
    odd = await makeToken(project, ["--agent", "bob 200 ok\u202e"]);
    const started = await startService(project);
    service = Object.assign(started, { origin: started.url });
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  const FORGED = "2026-01-01T00:00:00.000Z alice POST /api/call arbeit_task_delete 200 ok 1.0ms";
  const post = async (path: string, token: string, body: unknown) => {
    const response = await fetch(`${service.url}${path}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.status;
  };
  /** The log's lines after the banner, once `count` requests have been logged. */
  const logLines = async (count: number) => {
    const lines = () => service.stderr().split("\n").slice(1, -1);
    for (let waited = 0; lines().length < count && waited < 5_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    return lines();
  };

  it("writes one line per request, each its own, with names, methods and paths escaped and quoted", async () => {
    const statuses = [
      await post("/api/call", alice, { tool: `arbeit_query\n${FORGED}`, args: {} }),
      await post("/api/call", alice, { tool: "\u001b]0;owned\u0007\u001b[2J\r", args: {} }),
      await post("/mcp", alice, { jsonrpc: "2.0", id: 1, method: `initialize\r\n${FORGED}`, params: {} }),
      await post("/mcp", alice, [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "arbeit_query\u2028\u202e\u009b2J" } },
      ]),
      await post("/api/call", odd, { tool: "arbeit_query", args: { query: "tasks" } }),
    ];
    // A path with a C1 control (CSI) as a raw byte: refused by the parser, before any log line.
    const path = Buffer.concat([Buffer.from("GET /a"), Buffer.from([0x9b]), Buffer.from("2J HTTP/1.1\r\n")]);
    const answer = await raw(
      service,
      Buffer.concat([
        path,
        Buffer.from(
          `Host: ${new URL(service.url).host}\r\nAuthorization: Bearer ${alice}\r\nConnection: close\r\n\r\n`,
        ),
      ]),
    );
    assert.deepEqual([...statuses, answer.status], [400, 400, 400, 400, 200, 400]);

    const lines = await logLines(5);
    assert.equal(lines.length, 5, lines.join("\n"));
    for (const line of lines) {
      assert.match(line, /^\d{4}-\d\d-\d\dT[\d:.]+Z \S/, line);
      assert.doesNotMatch(line, /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/u, JSON.stringify(line));
    }
    assert.ok(lines[0]!.includes(JSON.stringify(`arbeit_query\n${FORGED}`)), lines[0]);
    assert.ok(lines[1]!.includes(String.raw`"\u001b]0;owned\u0007\u001b[2J\r"`), lines[1]);
    assert.ok(lines[2]!.includes(String.raw`"initialize\r\n2026-01-01T00:00:00.000Z alice`), lines[2]);
    assert.ok(lines[3]!.includes(String.raw`"arbeit_query\u2028\u202e\u009b2J"`), lines[3]);
    assert.match(lines[4]!, /Z "bob 200 ok\\u202e" POST \/api\/call arbeit_query 200 ok /);
  });

  it("cuts a field sent over-long, so a request cannot flood the log", async () => {
    const before = (await logLines(0)).length;
    assert.equal(await post("/api/call", alice, { tool: "x".repeat(100_000), args: {} }), 400);
    const [line] = (await logLines(before + 1)).slice(before);
    assert.ok(line!.length < 1_000, `${line!.length} characters`);
    assert.match(line!, /xxx…/);
  });
});
