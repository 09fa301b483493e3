import assert from "node:assert/strict";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { runCli } from "../helpers/cli.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, mcpClient, type Service, startService } from "./harness.js";

/**
 * The dashboard's routes on `arbeit serve`, spoken to over HTTP as the page speaks to them: who
 * may use them, what ends a live stream, and the limits and Origin rules they share with the
 * rest of the service. (test/serve/dashboard.test.ts drives the page itself in Chromium.)
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One request to the service with exactly these headers (Host and Origin included). */
function send(
  service: Service,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const url = new URL(service.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => {
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json });
        });
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

/** An open live event stream of the dashboard: what it sent so far, and whether it has ended. */
async function openStream(service: Service, secret: string) {
  const abort = new AbortController();
  const response = await fetch(`${service.url}/api/live`, {
    headers: { ...bearer(secret), Accept: "text/event-stream" },
    signal: abort.signal,
  });
  const reader = response.status === 200 ? response.body!.getReader() : undefined;
  let text = "";
  const ended = (async () => {
    if (!reader) return;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    } catch {
      // Aborted by the test.
    }
  })();
  return {
    status: response.status,
    response,
    ended,
    text: () => text,
    close: () => abort.abort(),
  };
}

/** `promise`, or a failure naming `what` if it has not settled after `ms`: a hang fails the test, it does not stall it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function serviceWith(args: string[]) {
  const state = {} as { project: UiProject; service: Service };
  before(async () => {
    state.project = await uiProject("sqlite");
    state.service = await startService(state.project, args);
  });
  after(async () => {
    await state.service?.stop();
    await state.project?.close();
  });
  return state;
}

describe("the dashboard's routes on arbeit serve", () => {
  const run = serviceWith([]);

  it("serves the page and its assets without a token; every read needs one (401)", async () => {
    const { service } = run;
    const page = await send(service, "GET", "/board", {});
    assert.equal(page.status, 200);
    assert.match(page.body, /<meta name="arbeit-sign-in"/);
    assert.equal((await send(service, "GET", "/assets/app.js", {})).status, 200);
    for (const path of [
      "/api/me",
      "/api/overview",
      "/api/agents",
      "/api/inbox",
      "/api/home",
      "/api/notices",
      "/api/task?id=tkt-zzzzzzzz",
      "/api/activity",
      "/api/live",
    ]) {
      const refused = await send(service, "GET", path, {});
      assert.equal(refused.status, 401, path);
      assert.equal(refused.body.error.code, "UNAUTHORIZED", path);
    }
    assert.equal(page.headers["set-cookie"], undefined, "no cookie is ever set");
  });

  it("refuses an agent's token on every dashboard route: people sign in to the dashboard", async () => {
    const { project, service } = run;
    const agent = await makeToken(project, ["--agent", "nightly"]);
    const stream = await openStream(service, agent);
    stream.close();
    assert.equal(stream.status, 403, "no live stream opens");
    const answers = [
      await send(service, "GET", "/api/me", bearer(agent)),
      await send(service, "POST", "/api/tools/arbeit_task_create", bearer(agent), { title: "By an agent" }),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 403);
      assert.equal(answer.body.error.code, "FORBIDDEN");
      assert.match(answer.body.error.message, /agent's token.*person's token/);
    }
    assert.deepEqual((await project.cli(["query", "tasks"])).tasks, [], "nothing was written");
  });

  it("ends the open live stream of a revoked token, and answers its next request 401", async () => {
    const { project, service } = run;
    const fay = await makeToken(project, ["--person", "fay"]);
    const stream = await openStream(service, fay);
    assert.equal(stream.status, 200);
    while (!stream.text().includes("event: change")) await new Promise((resolve) => setTimeout(resolve, 20));
    await runCli(["token", "revoke", "fay"], { cwd: project.dir, env: project.env });
    await within(stream.ended, 15_000, "the revoked token's stream ends");
    const after = await send(service, "GET", "/api/me", bearer(fay));
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, "UNAUTHORIZED");
  });

  it("ends the open live stream of a token once it expires", async () => {
    const { project, service } = run;
    const gil = await makeToken(project, ["--person", "gil", "--expires", "1h"]);
    const stream = await openStream(service, gil);
    assert.equal(stream.status, 200);
    // An hour passes: the token's expiry moves into the past, in the store the service reads.
    const db = new Database(join(project.dir, ".arbeit", "arbeit.db"));
    try {
      db.prepare("UPDATE tokens SET expires_at = ? WHERE name = ?").run("2000-01-01T00:00:00.000Z", "gil");
    } finally {
      db.close();
    }
    await within(stream.ended, 15_000, "the expired token's stream ends");
    assert.equal((await send(service, "GET", "/api/me", bearer(gil))).status, 401);
  });

  it("accepts writes from its own pages' Origin and refuses another origin's", async () => {
    const { project, service } = run;
    const gus = await makeToken(project, ["--person", "gus"]);
    const own = new URL(service.url).origin;
    const made = await send(
      service,
      "POST",
      "/api/tools/arbeit_task_create",
      { ...bearer(gus), Origin: own },
      {
        title: "From the page",
      },
    );
    assert.equal(made.body.success, true, JSON.stringify(made.body));
    for (const origin of ["https://evil.example", "http://127.0.0.1:1", own.replace("http:", "https:")]) {
      const refused = await send(
        service,
        "POST",
        "/api/tools/arbeit_task_create",
        { ...bearer(gus), Origin: origin },
        {
          title: "From elsewhere",
        },
      );
      assert.equal(refused.status, 403, origin);
      assert.equal(refused.body.error.code, "FORBIDDEN", origin);
    }
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.deepEqual(titles, ["From the page"]);
  });

  it("finishes on SIGTERM with a dashboard stream open: the stream ends and the service exits 0", async () => {
    const project = await uiProject("sqlite");
    try {
      const service = await startService(project);
      const hal = await makeToken(project, ["--person", "hal"]);
      const stream = await openStream(service, hal);
      assert.equal(stream.status, 200);
      assert.equal(await within(service.stop(), 15_000, "the service stops"), 0);
      await within(stream.ended, 15_000, "the stream ends");
    } finally {
      await project.close();
    }
  });
});

describe("the dashboard behind a reverse proxy (--allow-host)", () => {
  const run = serviceWith(["--allow-host", "arbeit.example.com"]);

  it("accepts a write from the public name's https page, and still refuses another origin's", async () => {
    const { project, service } = run;
    const ida = await makeToken(project, ["--person", "ida"]);
    const host = { ...bearer(ida), Host: "arbeit.example.com" };
    const made = await send(
      service,
      "POST",
      "/api/tools/arbeit_task_create",
      { ...host, Origin: "https://arbeit.example.com" },
      { title: "Through the proxy" },
    );
    assert.equal(made.status, 200);
    assert.equal(made.body.success, true, JSON.stringify(made.body));
    for (const origin of ["https://evil.example", "https://arbeit.example.com.evil.example", "null"]) {
      const refused = await send(
        service,
        "POST",
        "/api/tools/arbeit_task_create",
        { ...host, Origin: origin },
        { title: "Forged" },
      );
      assert.equal(refused.status, 403, origin);
    }
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.deepEqual(titles, ["Through the proxy"]);
  });
});

describe("the dashboard's live stream counts against --max-sessions", () => {
  const run = serviceWith(["--max-sessions", "1"]);

  it("a second stream of one token is 429, so is an MCP session; others are not held back; a closed stream frees its place", async () => {
    const { project, service } = run;
    const jo = await makeToken(project, ["--person", "jo"]);
    const kim = await makeToken(project, ["--person", "kim"]);
    const first = await openStream(service, jo);
    assert.equal(first.status, 200);
    const second = await openStream(service, jo);
    assert.equal(second.status, 429);
    assert.equal(((await second.response.json()) as any).error.code, "RATE_LIMITED");
    assert.ok(second.response.headers.get("retry-after"));
    await assert.rejects(mcpClient(service, jo), /429|RATE_LIMITED/);
    const other = await openStream(service, kim);
    assert.equal(other.status, 200, "another token has its own limit");
    other.close();
    first.close();
    await first.ended;
    // The service hears of the closed connection a moment later.
    let again = await openStream(service, jo);
    while (again.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await openStream(service, jo);
    }
    assert.equal(again.status, 200);
    again.close();
  });
});

describe("the dashboard's reads count against the token's request rate", () => {
  const run = serviceWith(["--rate", "1", "--burst", "2"]);

  it("past the burst a read is 429 RATE_LIMITED with Retry-After, and another token still reads", async () => {
    const { project, service } = run;
    const lou = await makeToken(project, ["--person", "lou"]);
    const max = await makeToken(project, ["--person", "max"]);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(service, "GET", "/api/overview", bearer(lou))).status);
    assert.deepEqual(statuses.slice(0, 2), [200, 200]);
    const refused = await send(service, "GET", "/api/overview", bearer(lou));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, "RATE_LIMITED");
    assert.ok(refused.headers["retry-after"]);
    assert.equal((await send(service, "GET", "/api/me", bearer(max))).status, 200);
  });
});
