import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { type CountingProxy, countingProxy } from "../remote/harness.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
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
 * The real OpenCode binary with Arbeit's plugin, in a checkout pointed at a real `arbeit serve`
 * (`arbeit init --server`, `arbeit login`): its tool calls and its hooks' steps (the briefing in
 * the system prompt, file touches) land on the service's store, and the laptop has no store.
 */

const RUN_TIMEOUT_MS = 150_000;

function opencodeWorks(): string | undefined {
  try {
    execFileSync(OPENCODE, ["--version"], { timeout: 30_000, stdio: "pipe" });
    return undefined;
  } catch (error) {
    return `the opencode binary does not run here: ${error instanceof Error ? error.message : String(error)}`;
  }
}
const cannotRun = requirement("the real-opencode tests", opencodeWorks());

const systemText = (request: ChatRequest) =>
  request.messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n");

describe("OpenCode, real binary, with the plugin pointed at arbeit serve", { skip: cannotRun }, () => {
  let server: UiProject;
  let service: Service;
  let proxy: CountingProxy;
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  let run: OpencodeRun;
  let taskId: string;

  const direct = async (args: string[]) => {
    const result = await runCli(args, { cwd: server.dir, env: server.env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result.json;
  };

  before(async () => {
    server = await uiProject("sqlite");
    const token = await makeToken(server, ["--agent", "opencode-laptop"]);
    service = await startService(server);
    proxy = await countingProxy(service.url);
    // A task made on the service beforehand: the session's briefing must come from there.
    taskId = (await direct(["task", "create", "Greeting module", "--json"])).data.task.id;

    sandbox = createSandbox();
    const project = sandbox.project;
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    writeFileSync(join(project, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
    seedConfigDir(join(project, ".opencode"));
    const laptop = (args: string[], input?: string) =>
      runCli(args, {
        cwd: project,
        env: { HOME: sandbox.home, XDG_CONFIG_HOME: sandbox.env.XDG_CONFIG_HOME! },
        ...(input === undefined ? {} : { input }),
      });
    for (const [args, input] of [
      [["init", "--server", proxy.url, "--json"]],
      [["login", proxy.url, "--token-stdin", "--json"], `${token}\n`],
      [["setup", "opencode", "--json"]],
    ] as Array<[string[], string?]>) {
      const result = await laptop(args, input);
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    }

    const hello = join(project, "src", "hello.txt");
    model = await startFakeModel((request): Reply => {
      if (!request.tools?.length) return { text: "Greeting module" };
      const calls = toolHistory(request);
      const called = (name: string) => calls.some((call) => call.name === name);
      if (!called("arbeit_task_start_work")) return { tool: "arbeit_task_start_work", args: { task_id: taskId } };
      if (!called("write")) return { tool: "write", args: { filePath: hello, content: "hello\n" } };
      if (!called("read")) return { tool: "read", args: { filePath: hello } };
      return { text: "All done." };
    });
    run = await runOpencode(sandbox, "Build the greeting module", { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
  });

  after(async () => {
    await model?.close();
    await proxy?.close();
    await service?.stop("SIGKILL");
    await server?.close();
    sandbox?.cleanup();
  });

  it("runs to its end", () => {
    assert.equal(run.timedOut, false, `opencode did not finish within ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
    assert.equal(run.code, 0, `opencode exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-2000)}`);
    assert.deepEqual(model.errors, []);
  });

  it("the tool call is made on the service, as the token's agent, in OpenCode's session, whose end frees the claim", async () => {
    const task = (await direct(["task", "get", taskId, "--json"])).data.task;
    assert.equal(task.status, "in_progress");
    const query = { query: "events", params: { task_id: taskId, event_types: ["task_claimed"] } };
    const { events } = (await direct(["call", "arbeit_query", JSON.stringify(query)])).data;
    assert.deepEqual(
      events.map((event: { agent: string }) => event.agent),
      ["opencode-laptop"],
    );
    assert.match(events[0].session_id, /^ses_/);
    // The run has ended (OpenCode disposing the project): the conversation's claim lapsed with it,
    // recorded against its session, and the task waits for whoever resumes it.
    const lapsed = (
      await direct([
        "call",
        "arbeit_query",
        JSON.stringify({ query: "events", params: { task_id: taskId, event_types: ["claim_expired"] } }),
      ])
    ).data.events;
    assert.equal(lapsed[0]?.payload.session, events[0].session_id);
    assert.equal(task.claim_session, null);
  });

  it("the files the session wrote and read are recorded on the service, relative to the project root", async () => {
    const query = { query: "files_for_task", params: { task_id: taskId } };
    const { files } = (await direct(["call", "arbeit_query", JSON.stringify(query)])).data;
    assert.deepEqual(
      files.map((file: { file_path: string; operations: string[] }) => [file.file_path, file.operations]),
      [["src/hello.txt", ["read", "write"]]],
    );
  });

  it("the system prompt carries the session's briefing from the service's store", () => {
    // Briefed at the session's first call, before it works on anything: the work waiting there.
    const first = model.requests.find((request) => request.tools?.length);
    assert.ok(first, "no model call with tools");
    assert.match(systemText(first), new RegExp(`Ready to start:\\n- ${taskId} "Greeting module"`));
  });

  it("sends only requests to the service's endpoints, one per tool call and per hook step, and makes no local store", () => {
    assert.ok(proxy.requests.length > 0);
    for (const request of proxy.requests) assert.match(request, /^POST \/api\/(call|hook)$/);
    const log = service.stderr();
    assert.match(log, /opencode-laptop POST \/api\/call arbeit_task_start_work 200 ok/);
    assert.match(log, /opencode-laptop POST \/api\/hook system-prompt 200 ok/);
    // The conversation's heartbeat: after the claiming call, and at the run's end.
    assert.ok((log.match(/opencode-laptop POST \/api\/hook heartbeat 200 ok/g)?.length ?? 0) >= 2, log);
    // One request for each file tool call (write, read) and one for OpenCode's file.edited event.
    assert.equal(log.match(/POST \/api\/hook track-files 200 ok/g)?.length, 3, log);
    assert.equal(proxy.requests.length, log.match(/ POST \/api\/(call|hook) /g)?.length);
    assert.equal(existsSync(join(sandbox.project, ".arbeit", "arbeit.db")), false);
  });
});
