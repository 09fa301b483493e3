import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { privateCa } from "../remote/private-ca.js";
import { makeToken, opensslMissing, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { type ChatRequest, type FakeModel, type Reply, startFakeModel, textOf, toolHistory } from "./fake-model.js";
import {
  createSandbox,
  OPENCODE,
  type OpencodeRun,
  type OpencodeSandbox,
  opencodeConfig,
  REPO,
  runOpencode,
  seedConfigDir,
} from "./harness.js";

/**
 * The real OpenCode binary with Arbeit's plugin in a fresh `git clone` of a project set up with
 * `arbeit init --server URL --ca certs/company-ca.pem`, against a real `arbeit serve` over TLS
 * whose certificate a private CA signed. Nothing in OpenCode's environment names the CA
 * (no NODE_EXTRA_CA_CERTS): the plugin, running in OpenCode's Bun, trusts it from the committed
 * `.arbeit/service.json` alone, for its tool calls and its hooks' steps.
 */

const RUN_TIMEOUT_MS = 150_000;

function opencodeWorks(): string | undefined {
  try {
    execFileSync(OPENCODE, ["--version"], { timeout: 30_000, stdio: "pipe" });
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return opensslMissing;
  } catch (error) {
    return `the opencode binary or git does not run here: ${error instanceof Error ? error.message : String(error)}`;
  }
}
const cannotRun = requirement("the real-opencode clone tests", opencodeWorks());

function git(cwd: string, args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8",
  });
}

const systemText = (request: ChatRequest) =>
  request.messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n");

describe("OpenCode in a fresh clone of a project on a service behind a private CA", { skip: cannotRun }, () => {
  let server: UiProject;
  let service: Service;
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  let run: OpencodeRun;
  let taskId: string;
  const origin = tempDir("arbeit-origin-");

  const direct = async (args: string[]) => {
    const result = await runCli(args, { cwd: server.dir, env: server.env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result.json;
  };

  before(async () => {
    server = await uiProject("sqlite");
    const certs = privateCa(server.dir, "company");
    const token = await makeToken(server, ["--agent", "opencode-clone"]);
    service = await startService(server, ["--tls-cert", certs.cert, "--tls-key", certs.key]);
    taskId = (await direct(["task", "create", "Greeting module", "--json"])).data.task.id;

    // The project as a teammate set it up and pushed it: the CA and the service file committed.
    sandbox = createSandbox();
    const user = { HOME: sandbox.home, XDG_CONFIG_HOME: sandbox.env.XDG_CONFIG_HOME! };
    git(origin.dir, ["init", "-q"]);
    mkdirSync(join(origin.dir, "certs"));
    copyFileSync(certs.ca, join(origin.dir, "certs", "company-ca.pem"));
    writeFileSync(join(origin.dir, ".gitignore"), "node_modules/\n");
    writeFileSync(join(origin.dir, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
    for (const args of [
      ["init", "--server", service.url, "--ca", "certs/company-ca.pem", "--json"],
      ["setup", "opencode", "--json"],
    ]) {
      const result = await runCli(args, { cwd: origin.dir, env: user });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    }
    git(origin.dir, ["add", "-A"]);
    git(origin.dir, ["commit", "-q", "-m", "Use the team's Arbeit service"]);

    // The teammate's laptop: clone, install, log in. Nothing names the CA outside the project.
    const project = sandbox.project;
    git(sandbox.root, ["clone", "-q", origin.dir, project]);
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    seedConfigDir(join(project, ".opencode"));
    const login = await runCli(["login", service.url, "--token-stdin", "--json"], {
      cwd: project,
      env: { ...user, NODE_EXTRA_CA_CERTS: "" },
      input: `${token}\n`,
    });
    assert.equal(login.code, 0, login.stdout + login.stderr);

    const hello = join(project, "src", "hello.txt");
    model = await startFakeModel((request): Reply => {
      if (!request.tools?.length) return { text: "Greeting module" };
      const calls = toolHistory(request);
      const called = (name: string) => calls.some((call) => call.name === name);
      if (!called("arbeit_init")) return { tool: "arbeit_init", args: {} };
      if (!called("arbeit_task_start_work")) return { tool: "arbeit_task_start_work", args: { task_id: taskId } };
      if (!called("write")) return { tool: "write", args: { filePath: hello, content: "hello\n" } };
      return { text: "All done." };
    });
    assert.equal(sandbox.env.NODE_EXTRA_CA_CERTS, undefined);
    run = await runOpencode(sandbox, "Build the greeting module", { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
  });

  after(async () => {
    await model?.close();
    await service?.stop("SIGKILL");
    await server?.close();
    sandbox?.cleanup();
    origin.cleanup();
  });

  it("runs to its end", () => {
    assert.equal(run.timedOut, false, `opencode did not finish within ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
    assert.equal(run.code, 0, `opencode exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-2000)}`);
    assert.deepEqual(model.errors, []);
  });

  it("the clone's instructions and arbeit_init say it uses the service: no local store is made", () => {
    assert.match(readFileSync(join(sandbox.project, "AGENTS.md"), "utf8"), /never `arbeit_init`/);
    const last = model.requests.at(-1)!;
    const init = toolHistory(last).find((call) => call.name === "arbeit_init");
    assert.ok(init, "arbeit_init was not called");
    assert.match(init.result, /ALREADY_INITIALIZED/);
    assert.match(init.result, /service_project/);
    assert.equal(existsSync(join(sandbox.project, ".arbeit", "arbeit.db")), false);
  });

  it("its tool call and its hooks' steps reach the service over TLS, trusting the committed CA", async () => {
    const task = (await direct(["task", "get", taskId, "--json"])).data.task;
    assert.equal(task.status, "in_progress");
    // Claimed as the token's agent; the run has ended since, and its claim with the conversation.
    const claimed = { query: "events", params: { task_id: taskId, event_types: ["task_claimed"] } };
    const { events } = (await direct(["call", "arbeit_query", JSON.stringify(claimed)])).data;
    assert.deepEqual(
      events.map((event: { agent: string }) => event.agent),
      ["opencode-clone"],
    );
    const query = { query: "files_for_task", params: { task_id: taskId } };
    const { files } = (await direct(["call", "arbeit_query", JSON.stringify(query)])).data;
    assert.deepEqual(
      files.map((file: { file_path: string }) => file.file_path),
      ["src/hello.txt"],
    );
    const first = model.requests.find((request) => request.tools?.length);
    assert.ok(first, "no model call with tools");
    assert.match(systemText(first), new RegExp(`Ready to start:\\n- ${taskId} "Greeting module"`));
    const log = service.stderr();
    assert.match(log, /opencode-clone POST \/api\/call arbeit_task_start_work 200 ok/);
    assert.match(log, /opencode-clone POST \/api\/hook system-prompt 200 ok/);
  });
});
