import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request } from "node:https";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { checkout } from "../remote/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, opensslMissing, selfSigned, startService } from "./harness.js";

/** POST /api/call over HTTPS, trusting only `ca`, with more `headers` (Host and Origin, say). */
function httpsCall(
  url: string,
  ca: Buffer,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/call`,
      {
        method: "POST",
        ca,
        // The certificate names 127.0.0.1 whatever Host the request claims.
        servername: "localhost",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}`, ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("arbeit serve with --tls-cert and --tls-key", { skip: requirement("openssl", opensslMissing) }, () => {
  let project: UiProject;
  let files: { cert: string; key: string };
  let token: string;

  before(async () => {
    project = await uiProject("sqlite");
    files = selfSigned(project.dir);
    token = await makeToken(project, ["--agent", "alice"]);
  });
  after(() => project?.close());

  it("serves HTTPS: a client that trusts the certificate makes calls, and no clear-text HTTP is answered", async () => {
    const service = await startService(project, ["--tls-cert", files.cert, "--tls-key", files.key]);
    try {
      assert.match(service.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const ca = readFileSync(files.cert);
      const made = await httpsCall(service.url, ca, token, {
        tool: "arbeit_task_create",
        args: { title: "Over TLS" },
      });
      assert.equal(made.status, 200);
      assert.equal(made.body.success, true, JSON.stringify(made.body));
      // Without the certificate trusted, the client refuses the connection.
      await assert.rejects(
        httpsCall(service.url, Buffer.from(""), token, { tool: "arbeit_query", args: { query: "tasks" } }),
      );
      const plain = service.url.replace("https:", "http:");
      await assert.rejects(fetch(`${plain}/healthz`));
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  it("over HTTPS too, refuses a foreign Host and a write from a foreign origin or from its own address over http:", async () => {
    const service = await startService(project, ["--tls-cert", files.cert, "--tls-key", files.key]);
    try {
      const ca = readFileSync(files.cert);
      const port = new URL(service.url).port;
      const create = (title: string, headers: Record<string, string>) =>
        httpsCall(service.url, ca, token, { tool: "arbeit_task_create", args: { title } }, headers);
      const host = await create("Rebound", { Host: `attacker.example:${port}` });
      const foreign = await create("Posted from elsewhere", { Origin: "https://attacker.example" });
      const downgraded = await create("Posted from plain http", { Origin: `http://127.0.0.1:${port}` });
      assert.deepEqual(
        [host.status, foreign.status, downgraded.status, host.body.error.code, foreign.body.error.code],
        [403, 403, 403, "FORBIDDEN", "FORBIDDEN"],
      );
      const own = await create("Posted from its own page", { Origin: `https://127.0.0.1:${port}` });
      assert.equal(own.body.success, true, JSON.stringify(own.body));
      const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
      assert.ok(titles.includes("Posted from its own page"), titles.join(", "));
      for (const refused of ["Rebound", "Posted from elsewhere", "Posted from plain http"])
        assert.ok(!titles.includes(refused), `${refused} was written`);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  it("a checkout pointed at it calls over HTTPS when NODE_EXTRA_CA_CERTS names the certificate, and not without", async () => {
    const service = await startService(project, ["--tls-cert", files.cert, "--tls-key", files.key]);
    const laptop = checkout();
    try {
      assert.equal((await laptop.cli(["init", "--server", service.url, "--json"])).code, 0);
      const trusted = { ARBEIT_TOKEN: token, NODE_EXTRA_CA_CERTS: files.cert };
      const made = await laptop.cli(["task", "create", "Over TLS from a checkout", "--json"], { env: trusted });
      assert.equal(made.json?.success, true, made.stdout + made.stderr);
      const refused = await laptop.cli(["query", "ready", "--json"], { env: { ARBEIT_TOKEN: token } });
      assert.equal(refused.json?.error.code, "STORE_UNAVAILABLE");
      assert.match(refused.json?.error.message, /certificate is not trusted/);
    } finally {
      laptop.close();
      assert.equal(await service.stop(), 0);
    }
  });

  it("on an address other machines reach, needs no --insecure-no-tls and prints no warning", async () => {
    const service = await startService(project, [
      "--host",
      "0.0.0.0",
      "--tls-cert",
      files.cert,
      "--tls-key",
      files.key,
    ]);
    try {
      assert.match(service.url, /^https:\/\/0\.0\.0\.0:\d+$/);
      assert.doesNotMatch(service.stderr(), /WARNING/);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  it("one of the two flags alone, a file that is missing or a key that is no key: a usage error (exit 2)", async () => {
    const broken = join(project.dir, "broken.pem");
    writeFileSync(broken, "not a key\n");
    assert.ok(existsSync(files.cert));
    for (const args of [
      ["--tls-cert", files.cert],
      ["--tls-key", files.key],
      ["--tls-cert", files.cert, "--tls-key", join(project.dir, "missing.pem")],
      ["--tls-cert", files.cert, "--tls-key", broken],
    ]) {
      const result = await runCli(["serve", "--port", "0", ...args], { cwd: project.dir, env: project.env });
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, /--tls-/);
    }
  });
});

describe("arbeit serve behind a reverse proxy that keeps the client's Host", () => {
  let project: UiProject;
  before(async () => {
    project = await uiProject("sqlite");
  });
  after(() => project?.close());

  const health = (url: string, host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${url}/healthz`, { headers: { Host: host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });

  it("answers the public name given with --allow-host, and still refuses any other", async () => {
    const service = await startService(project, ["--allow-host", "arbeit.example.com"]);
    try {
      assert.equal(await health(service.url, "arbeit.example.com"), 200);
      assert.equal(await health(service.url, "ARBEIT.example.com"), 200);
      assert.equal(await health(service.url, "attacker.example"), 403);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });
});
