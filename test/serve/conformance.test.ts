import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { node22Runner } from "../helpers/hosts.js";
import { installOnDemand } from "../helpers/on-demand.js";
import { postgresSkip } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, type Service, startService } from "./harness.js";

/**
 * The official MCP conformance suite against the real `arbeit serve`. The suite is installed on
 * demand (not a dependency of this checkout) and needs Node 22, or Bun under an older Node.
 */
const VERSION = "0.1.16";
const suite = installOnDemand("@modelcontextprotocol/conformance", VERSION, `conformance-${VERSION}`);
const node22 = node22Runner();
const runner = node22.path;
const skip =
  requirement(`the MCP conformance suite ${VERSION}`, suite.missing) ||
  requirement("a Node 22 runtime for the conformance suite (Bun)", node22.missing);

/**
 * Every server scenario of the suite that applies to a server offering tools but no prompts,
 * resources, logging or completions, and that does not call the suite's own reference tools.
 * docs/mcp.md lists the others and why they do not apply.
 */
const SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

/**
 * The suite's server client sends no Authorization header and has no option to add one, while
 * every request to /mcp needs a token. This proxy, on 127.0.0.1 like the service, adds the
 * bearer token and forwards everything else: a foreign Host or Origin reaches the service as the
 * suite sent it; the proxy's own address is translated to the service's.
 */
async function tokenProxy(service: Service, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(service.url);
  const server: Server = createServer((req, res) => {
    const own = new RegExp(
      `^(https?://)?(127\\.0\\.0\\.1|localhost|\\[::1\\]):${(server.address() as AddressInfo).port}$`,
    );
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    for (const name of ["host", "origin"] as const) {
      const value = headers[name];
      if (typeof value === "string") headers[name] = value.replace(own, `$1$2:${target.port}`);
    }
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

/** Runs one scenario; resolves to its exit code, its output and the checks it saved. */
function runScenario(
  url: string,
  scenario: string,
  outDir: string,
): Promise<{ code: number; output: string; checks: Check[] }> {
  const entry = join(suite.dir, "dist", "index.js");
  const child = spawn(runner, [entry, "server", "--url", url, "--scenario", scenario, "-o", outDir], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      const saved = readdirSync(outDir).find((name) => name.startsWith(`server-${scenario}-`));
      const checks: Check[] = saved ? JSON.parse(readFileSync(join(outDir, saved, "checks.json"), "utf8")) : [];
      resolve({ code: code ?? -1, output, checks });
    }),
  );
}

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`the MCP conformance suite against arbeit serve on ${engine}`, {
    skip: skip || (engine === "postgres" ? await postgresSkip() : false),
  }, () => {
    let project: UiProject;
    let service: Service;
    let proxy: Awaited<ReturnType<typeof tokenProxy>>;
    let out: ReturnType<typeof tempDir>;

    before(async () => {
      project = await uiProject(engine);
      const token = await makeToken(project, ["--agent", "conformance"]);
      service = await startService(project);
      proxy = await tokenProxy(service, token);
      out = tempDir("arbeit-conformance-");
    });
    after(async () => {
      await proxy?.close();
      await service?.stop("SIGKILL");
      await project?.close();
      out?.cleanup();
    });

    for (const scenario of SCENARIOS) {
      it(`passes ${scenario}`, async () => {
        const run = await runScenario(proxy.url, scenario, out.dir);
        const passed = run.checks.filter((check) => check.status === "SUCCESS");
        const others = run.checks.filter((check) => check.status !== "SUCCESS" && check.status !== "INFO");
        assert.deepEqual(others, [], run.output);
        assert.ok(passed.length > 0, `no check passed:\n${run.output}`);
        assert.equal(run.code, 0, run.output);
      });
    }

    it("the suite's requests reached the service as the token's agent, and a foreign Host and Origin were refused by the Host/Origin check (403), not the token gate", () => {
      const log = service.stderr().trim().split("\n");
      const mcp = log.filter((line) => line.includes(" /mcp "));
      assert.ok(mcp.length > 0, service.stderr());
      for (const line of mcp) assert.match(line, /^\S+ (conformance|-) /, line);
      // A 401 would also be a 4xx: only a 403 shows the Host/Origin check refused it, not the token gate.
      assert.ok(
        mcp.some((line) => / 403 FORBIDDEN /.test(line)),
        `no request was refused for its Host:\n${service.stderr()}`,
      );
      assert.ok(!mcp.some((line) => / 401 /.test(line)), `a request went without the token:\n${service.stderr()}`);
    });
  });
}
