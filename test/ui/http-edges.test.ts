import assert from "node:assert/strict";
import { request } from "node:http";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { startDashboard as serveDashboard } from "../../src/ui/server/server.js";
import { assertRefused, raw } from "../helpers/raw-http.js";
import { requirement } from "../helpers/requirements.js";
import { openTestProject, type TestProject } from "../helpers/service.js";
import { type Dashboard, startDashboard, type UiProject, uiProject } from "./harness.js";

/**
 * Requests a browser would never send, written byte for byte over a raw socket to the real
 * `arbeit ui`: each is refused with a 4xx and the dashboard's refusal envelope, never a 500 and
 * never a stack trace.
 */

describe("arbeit ui refuses malformed requests with its own refusal, never a 500", () => {
  let project: UiProject;
  let dashboard: Dashboard;
  let host: string;
  let auth: string;

  before(async () => {
    project = await uiProject("sqlite");
    dashboard = await startDashboard(project.dir, { env: project.env });
    host = `Host: ${new URL(dashboard.origin).host}\r\n`;
    auth = `Authorization: Bearer ${dashboard.token}\r\n`;
  });
  after(async () => {
    await dashboard?.stop();
    await project?.close();
  });

  const titles = async () => (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);

  it("a Host, Origin or Authorization header sent twice: 400, whichever copy comes first", async () => {
    const own = new URL(dashboard.origin).host;
    for (const headers of [
      `Host: ${own}\r\nHost: attacker.example\r\n${auth}`,
      `Host: attacker.example\r\nHost: ${own}\r\n${auth}`,
      `${host}${auth}Authorization: Bearer someone-else\r\n`,
      `${host}${auth}Origin: ${dashboard.origin}\r\nOrigin: https://attacker.example\r\n`,
    ])
      assertRefused(await raw(dashboard, `GET /api/me HTTP/1.1\r\n${headers}\r\n`), 400, "INVALID_ARGUMENT");
    assert.equal((await raw(dashboard, `GET /api/me HTTP/1.1\r\n${host}${auth}\r\n`)).status, 200);
  });

  it("a target that is not a URL at all: 400, before any token check", async () => {
    assertRefused(await raw(dashboard, `GET http://[/ HTTP/1.1\r\n${host}\r\n`), 400, "INVALID_ARGUMENT");
  });

  it("an absolute-form target, even naming this server: 400 (the Host header is the one checked)", async () => {
    const self = await raw(dashboard, `GET ${dashboard.origin}/api/me HTTP/1.1\r\n${host}${auth}\r\n`);
    assertRefused(self, 400, "INVALID_ARGUMENT");
    const foreign = await raw(dashboard, `GET http://attacker.example/api/me HTTP/1.1\r\n${host}${auth}\r\n`);
    assertRefused(foreign, 400, "INVALID_ARGUMENT");
  });

  it("a path a URL parser would read a host out of (`//name/...`, a backslash), or `*`: 400", async () => {
    for (const target of ["//attacker.example/api/me", "/\\attacker.example/api/me", "*"]) {
      const answer = await raw(dashboard, `GET ${target} HTTP/1.1\r\n${host}${auth}\r\n`);
      assertRefused(answer, 400, "INVALID_ARGUMENT");
    }
  });

  it("a broken %-escape or one that is not UTF-8, in the path or the query: 400", async () => {
    for (const target of ["/task/%E0%A4%A", "/task/%zz", "/api/overview?list=%FF", "/api/activity?task=%E0%A4"]) {
      const answer = await raw(dashboard, `GET ${target} HTTP/1.1\r\n${host}${auth}\r\n`);
      assertRefused(answer, 400, "INVALID_ARGUMENT");
    }
  });

  it("a URL longer than any view's (414), and headers past Node's limit (431)", async () => {
    const long = await raw(dashboard, `GET /board?q=${"a".repeat(9000)} HTTP/1.1\r\n${host}\r\n`);
    assertRefused(long, 414, "FIELD_TOO_LARGE");
    const longer = await raw(dashboard, `GET /board?q=${"a".repeat(20_000)} HTTP/1.1\r\n${host}\r\n`);
    assertRefused(longer, 431, "FIELD_TOO_LARGE");
    const header = await raw(
      dashboard,
      `GET /api/me HTTP/1.1\r\n${host}${auth}X-Filler: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    assertRefused(header, 431, "FIELD_TOO_LARGE");
  });

  it("methods other than GET, HEAD and POST, CONNECT and unknown ones included: 405 naming the allowed ones", async () => {
    for (const method of ["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"]) {
      const answer = await raw(dashboard, `${method} /api/me HTTP/1.1\r\n${host}${auth}\r\n`);
      assertRefused(answer, 405, "METHOD_NOT_ALLOWED");
      assert.equal(answer.headers.get("allow"), "GET, HEAD, POST", method);
    }
    const tunnel = await raw(dashboard, `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host}${auth}\r\n`);
    assertRefused(tunnel, 405, "METHOD_NOT_ALLOWED");
  });

  it("no Host header, or bytes that are not HTTP: 400", async () => {
    assertRefused(await raw(dashboard, `GET /api/me HTTP/1.1\r\n${auth}\r\n`), 400, "INVALID_ARGUMENT");
    assertRefused(await raw(dashboard, `GET /api/me HTTP/1.1 extra\r\n${host}\r\n`), 400, "INVALID_ARGUMENT");
    // Raw bytes a target may not hold: a control character, unescaped UTF-8, a space.
    for (const target of ["/board\x01", "/task/\u00e9", "/board x"])
      assertRefused(await raw(dashboard, `GET ${target} HTTP/1.1\r\n${host}\r\n`), 400, "INVALID_ARGUMENT");
    assertRefused(
      await raw(dashboard, Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00])),
      400,
      "INVALID_ARGUMENT",
    );
  });

  it("a body over 1 MiB, announced or chunked: 413, and nothing is written", async () => {
    const post = `POST /api/tools/arbeit_task_create HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\n`;
    const announced = await raw(dashboard, `${post}Content-Length: 2000000\r\n\r\n{"title":"Too big`);
    assertRefused(announced, 413, "FIELD_TOO_LARGE");
    const big = JSON.stringify({ title: "Too big", description: "x".repeat(1_200_000) });
    const chunked = await raw(
      dashboard,
      `${post}Transfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    );
    assertRefused(chunked, 413, "FIELD_TOO_LARGE");
    assert.ok(!(await titles()).includes("Too big"));
  });

  it("a body whose length is given twice over (Content-Length and chunked): 400, and nothing is written", async () => {
    const answer = await raw(
      dashboard,
      `POST /api/tools/arbeit_task_create HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nContent-Length: 24\r\nTransfer-Encoding: chunked\r\n\r\n{"title":"Smuggled one"}`,
    );
    assertRefused(answer, 400, "INVALID_ARGUMENT");
    assert.ok(!(await titles()).includes("Smuggled one"));
  });

  it("a body that is not UTF-8, or not declared as JSON: refused, and nothing is written", async () => {
    const post = `POST /api/tools/arbeit_task_create HTTP/1.1\r\n${host}${auth}`;
    const body = Buffer.concat([Buffer.from('{"title":"Not UTF-8 '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const bytes = await raw(
      dashboard,
      Buffer.concat([
        Buffer.from(`${post}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`),
        body,
      ]),
    );
    assertRefused(bytes, 400, "INVALID_ARGUMENT");
    const json = '{"title":"Not JSON typed"}';
    const lookalike = await raw(
      dashboard,
      `${post}Content-Type: application/jsonp\r\nContent-Length: ${json.length}\r\n\r\n${json}`,
    );
    assertRefused(lookalike, 415, "INVALID_ARGUMENT");
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(!titles.some((title: string) => title.startsWith("Not ")), titles.join(", "));
  });

  it("an Expect it cannot meet: 417 with the refusal", async () => {
    const answer = await raw(dashboard, `GET /api/me HTTP/1.1\r\n${host}${auth}Expect: teapot\r\n\r\n`);
    assertRefused(answer, 417, "INVALID_ARGUMENT");
  });

  it("HEAD of the event stream: its headers, then the end, not a stream held open", { timeout: 20_000 }, async () => {
    const answer = await raw(dashboard, `HEAD /api/live HTTP/1.1\r\n${host}${auth}\r\n`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.equal(answer.body, "");
  });

  it("still answers a well-formed request on the same server afterwards", async () => {
    const answer = await raw(dashboard, `GET /api/me HTTP/1.1\r\n${host}${auth}Connection: close\r\n\r\n`);
    assert.equal(answer.status, 200);
    assert.equal(answer.json.success, true);
  });
});

/** Whether this process may listen on 127.0.0.1:80 (root, or the capability, and the port free). */
async function port80Skip(): Promise<string | false> {
  const problem = await new Promise<string | undefined>((resolve) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(`binding 127.0.0.1:80 failed (${error.code})`));
    probe.listen(80, "127.0.0.1", () => probe.close(() => resolve(undefined)));
  });
  return requirement("the dashboard on port 80", problem);
}

describe("arbeit ui --port 80", { skip: await port80Skip() }, () => {
  let project: UiProject;
  let dashboard: Dashboard;

  before(async () => {
    project = await uiProject("sqlite");
    dashboard = await startDashboard(project.dir, { env: project.env, args: ["--port", "80"] });
  });
  after(async () => {
    await dashboard?.stop();
    await project?.close();
  });

  /** A request with the Host and Origin a browser sends on port 80: no `:80` in either. */
  const fetchAsBrowser = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: 80,
          method,
          path,
          headers: {
            Host: "127.0.0.1",
            Authorization: `Bearer ${dashboard.token}`,
            ...(body === undefined ? {} : { Origin: "http://127.0.0.1", "Content-Type": "application/json" }),
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  it("prints a URL without the default port, and answers the Host and Origin a browser sends for it", async () => {
    const me = await fetchAsBrowser("GET", "/api/me");
    assert.equal(me.status, 200, JSON.stringify(me.json));
    const created = await fetchAsBrowser(
      "POST",
      "/api/tools/arbeit_task_create",
      JSON.stringify({ title: "From :80" }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.json));
    assert.equal(created.json.success, true);
    assert.match(dashboard.url, /^http:\/\/127\.0\.0\.1\/#token=/);
  });
});

describe("a request that never finishes arriving", () => {
  let project: TestProject;
  let dashboard: Awaited<ReturnType<typeof serveDashboard>> & { origin: string };
  let token: string;

  before(async () => {
    project = await openTestProject();
    const started = await serveDashboard({
      service: project.service,
      person: "alice",
      readOnly: false,
      host: "127.0.0.1",
      port: 0,
      cwd: project.dir,
      engine: "sqlite",
      location: project.dbPath,
      requestTimeoutMs: 1000,
    });
    const url = new URL(started.url);
    token = new URLSearchParams(url.hash.slice(1)).get("token")!;
    dashboard = Object.assign(started, { origin: url.origin });
  });
  after(async () => {
    await dashboard?.close();
    await project?.close();
  });

  it("is cut with a 408 refusal, headers or body, while a page's event stream stays open", {
    timeout: 20_000,
  }, async () => {
    const notices: number[] = [];
    const stream = request(new URL("/api/live", dashboard.origin), { headers: { Authorization: `Bearer ${token}` } });
    const opened = new Promise<void>((resolve, reject) => {
      stream.on("response", (res) => {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          for (const match of chunk.matchAll(/data: (\{[^\n]*\})/g)) notices.push(JSON.parse(match[1]!).seq);
          resolve();
        });
      });
      stream.on("error", reject);
    });
    stream.end();
    try {
      await opened;
      const host = `Host: ${new URL(dashboard.origin).host}\r\n`;
      const body = await raw(
        dashboard,
        `POST /api/tools/arbeit_task_create HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`,
        true,
      );
      assertRefused(body, 408, "INVALID_ARGUMENT");
      const headers = await raw(dashboard, `GET /api/me HTTP/1.1\r\n${host}`, true);
      assertRefused(headers, 408, "INVALID_ARGUMENT");

      // The stream outlived both cuts: it still reports the next change.
      const before = notices.at(-1)!;
      await project.ok("arbeit_task_create", { title: "After the cut" });
      while (!notices.some((seq) => seq > before)) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      stream.destroy();
    }
  });
});
