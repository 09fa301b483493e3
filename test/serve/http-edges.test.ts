import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertRefused, raw } from "../helpers/raw-http.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, type Service, startService } from "./harness.js";

/**
 * Requests no MCP client or Arbeit client would send, written byte for byte to the real
 * `arbeit serve`: each is refused with a 4xx and the refusal envelope, as `arbeit ui` refuses
 * them (one implementation serves both), and nothing is written.
 */
describe("arbeit serve refuses malformed requests with its refusal envelope, never a 500", () => {
  let project: UiProject;
  let service: Service & { origin: string };
  let host: string;
  let auth: string;
  let secret: string;

  before(async () => {
    project = await uiProject("sqlite");
    secret = await makeToken(project, ["--agent", "alice"]);
    const started = await startService(project, ["--request-timeout", "1"]);
    service = Object.assign(started, { origin: started.url });
    host = `Host: ${new URL(service.url).host}\r\n`;
    auth = `Authorization: Bearer ${secret}\r\n`;
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  const titles = async () => (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
  const post = (headers: string, body: string | Buffer) =>
    Buffer.concat([
      Buffer.from(
        `POST /api/call HTTP/1.1\r\n${host}${auth}${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      ),
      Buffer.from(body),
    ]);
  const create = (title: string) => JSON.stringify({ tool: "arbeit_task_create", args: { title } });

  it("an absolute-form target, `//name/...`, a backslash or a broken %-escape: 400, before any tool runs", async () => {
    for (const target of [
      "http://attacker.example/api/call",
      `${service.url}/api/call`,
      "//attacker.example/api/call",
      "/\\attacker.example/api/call",
      "/api/call?x=%E0%A4",
    ]) {
      const answer = await raw(
        service,
        `POST ${target} HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nContent-Length: ${create("Via a bad target").length}\r\n\r\n${create("Via a bad target")}`,
      );
      assertRefused(answer, 400, "INVALID_ARGUMENT");
    }
    assert.ok(!(await titles()).includes("Via a bad target"));
  });

  it("a URL longer than any the service serves: 414", async () => {
    assertRefused(
      await raw(service, `GET /healthz?q=${"a".repeat(9000)} HTTP/1.1\r\n${host}\r\n`),
      414,
      "FIELD_TOO_LARGE",
    );
  });

  it("no Host header: 400", async () => {
    assertRefused(await raw(service, `GET /healthz HTTP/1.1\r\n\r\n`), 400, "INVALID_ARGUMENT");
  });

  it("a header the service judges a request by, sent twice: 400, whichever copy comes first, and nothing is written", async () => {
    const own = new URL(service.url).host;
    const body = create("Sent with a header twice");
    const twice = (headers: string, auth = `Authorization: Bearer ${secret}\r\n`) =>
      raw(
        service,
        `POST /api/call HTTP/1.1\r\n${headers}${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
    for (const headers of [
      `Host: ${own}\r\nHost: attacker.example\r\n`,
      `Host: attacker.example\r\nHost: ${own}\r\n`,
      `${host}Origin: ${service.url}\r\nOrigin: https://attacker.example\r\n`,
      `${host}Content-Type: text/plain\r\n`,
      `${host}X-Arbeit-Session: alice-1\r\nX-Arbeit-Session: bob-1\r\n`,
    ])
      assertRefused(await twice(headers), 400, "INVALID_ARGUMENT");
    assertRefused(
      await twice(host, `Authorization: Bearer ${secret}\r\nAuthorization: Bearer arb_someone-else\r\n`),
      400,
      "INVALID_ARGUMENT",
    );
    assert.ok(!(await titles()).includes("Sent with a header twice"));
    // The same request with each header once is accepted.
    assert.equal((await twice(host)).json.success, true);
  });

  it("methods the service does not answer, CONNECT and unknown ones included: 405 naming the allowed ones", async () => {
    for (const method of ["PUT", "PATCH", "OPTIONS", "TRACE", "BREW"]) {
      const answer = await raw(service, `${method} /api/call HTTP/1.1\r\n${host}${auth}\r\n`);
      assertRefused(answer, 405, "METHOD_NOT_ALLOWED");
      assert.equal(answer.headers.get("allow"), "GET, HEAD, POST, DELETE", method);
    }
    for (const method of ["GET", "HEAD", "DELETE"]) {
      const answer = await raw(service, `${method} /api/call HTTP/1.1\r\n${host}${auth}\r\n`);
      assert.equal(answer.status, 405, `${method} /api/call`);
      assert.equal(answer.headers.get("allow"), "POST", `${method} /api/call`);
      if (method !== "HEAD") assertRefused(answer, 405, "METHOD_NOT_ALLOWED");
    }
    const tunnel = await raw(service, `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host}${auth}\r\n`);
    assertRefused(tunnel, 405, "METHOD_NOT_ALLOWED");
  });

  it("an Expect it cannot meet: 417 with the refusal", async () => {
    assertRefused(
      await raw(service, `GET /healthz HTTP/1.1\r\n${host}Expect: teapot\r\n\r\n`),
      417,
      "INVALID_ARGUMENT",
    );
  });

  it("a body that is not UTF-8: 400, and nothing is written", async () => {
    const body = Buffer.concat([
      Buffer.from('{"tool":"arbeit_task_create","args":{"title":"Not UTF-8 '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}'),
    ]);
    assertRefused(await raw(service, post("Content-Type: application/json\r\n", body)), 400, "INVALID_ARGUMENT");
    assert.ok(!(await titles()).some((title: string) => title.startsWith("Not UTF-8")));
  });

  it("a request whose headers or body never finish arriving: 408, and nothing is written", {
    timeout: 20_000,
  }, async () => {
    const body = await raw(
      service,
      `POST /api/call HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nContent-Length: 200\r\n\r\n${create("Never finished")}`,
      true,
    );
    assertRefused(body, 408, "INVALID_ARGUMENT");
    const headers = await raw(service, `GET /healthz HTTP/1.1\r\n${host}`, true);
    assertRefused(headers, 408, "INVALID_ARGUMENT");
    assert.ok(!(await titles()).includes("Never finished"));
  });

  it("still answers a well-formed call afterwards", async () => {
    const answer = await raw(service, post("Content-Type: application/json\r\n", create("Well formed")));
    assert.equal(answer.status, 200, answer.body);
    assert.equal(answer.json.success, true, answer.body);
    assert.ok((await titles()).includes("Well formed"));
  });
});
