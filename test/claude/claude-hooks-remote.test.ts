import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { type CountingProxy, countingProxy } from "../remote/harness.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import { type FakeAnthropic, startFakeAnthropic, textOf, toolNames, toolResults } from "./fake-anthropic.js";

/**
 * The real Claude Code, in a checkout pointed at `arbeit serve` (`arbeit init --server`, then
 * `arbeit setup claude`), with the token in its environment: its hooks and its `arbeit mcp`
 * server send everything to the service. The scripted model starts work on a task it was briefed
 * on at session start, then reads a file: the briefing came from the service's store, and the
 * file touch landed there.
 */

const cannotRun = requirement("the real-Claude-Code run with hooks against arbeit serve", claudeMissing());
const HOOK_CONTEXT = "SessionStart hook additional context: ";
const TITLE = "Harden the login form";
const START = "mcp__arbeit__arbeit_task_start_work";

describe("Claude Code, real binary, with its hooks and arbeit mcp pointed at arbeit serve", {
  skip: cannotRun,
  timeout: 300_000,
}, () => {
  let server: UiProject;
  let service: Service;
  let proxy: CountingProxy;
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let run: ClaudeRun;
  let taskId: string;

  const direct = async (args: string[]) => {
    const result = await runCli(args, { cwd: server.dir, env: server.env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };
  const diagnosis = () => `${run.stderr}\n${run.stdout.slice(-3000)}\nservice log:\n${service.stderr()}`;

  before(async () => {
    server = await uiProject("sqlite");
    const token = await makeToken(server, ["--agent", "claude-laptop"]);
    service = await startService(server);
    proxy = await countingProxy(service.url);
    taskId = (await direct(["task", "create", TITLE, "--json"])).task.id;

    sandbox = createSandbox();
    const project = sandbox.project;
    writeFileSync(join(project, "login.ts"), "export const form = {};\n");
    for (const args of [
      ["init", "--server", proxy.url, "--json"],
      ["setup", "claude", "--json"],
    ]) {
      const result = await runCli(args, { cwd: project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    }

    fake = await startFakeAnthropic((request) => {
      if (!toolNames(request).includes(START)) return { text: "title" };
      const done = toolResults(request);
      // The task's id reaches the model only through the session-start briefing.
      const briefed = request.messages.map((message) => textOf(message.content)).join("\n");
      const id = new RegExp(`(tkt-[0-9a-z]{8}) "${TITLE}"`).exec(briefed)?.[1];
      if (!id) return { text: "NOT-BRIEFED" };
      if (!done.has("toolu_start")) return { tools: [{ id: "toolu_start", name: START, input: { task_id: id } }] };
      if (!done.has("toolu_read"))
        return { tools: [{ id: "toolu_read", name: "Read", input: { file_path: join(project, "login.ts") } }] };
      return { text: "REMOTE-HOOKS-DONE" };
    });
    run = await runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt: "Work on the login form.",
      allowedTools: ["Read", "mcp__arbeit"],
      env: { ARBEIT_TOKEN: token },
    });
  });

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
    await proxy?.close();
    await service?.stop("SIGKILL");
    await server?.close();
  });

  it("the conversation runs to its end", () => {
    assert.equal(run.timedOut, false, diagnosis());
    assert.equal(run.result?.result, "REMOTE-HOOKS-DONE", diagnosis());
  });

  it("SessionStart briefed the model from the service's store (the laptop has none)", () => {
    const first = fake.requests.find((request) => toolNames(request).includes(START));
    const text = first!.messages.map((message) => textOf(message.content)).join("\n");
    assert.ok(text.includes(HOOK_CONTEXT), diagnosis());
    assert.match(text, new RegExp(`Ready to start:\\n- ${taskId} "${TITLE}"`));
    assert.equal(existsSync(join(sandbox.project, ".arbeit", "arbeit.db")), false);
  });

  it("the MCP call started the work on the service, in the conversation's session, as the token's agent", async () => {
    const task = (await direct(["task", "get", taskId, "--json"])).task;
    assert.equal(task.claim_session, null, "SessionEnd hands the claim back");
    const events = (await direct(["call", "arbeit_query", '{"query": "events", "params": {"limit": 1000}}'])).events;
    const started = events.find((event: any) => event.event_type === "work_started" && event.task_id === taskId);
    assert.deepEqual([started?.session_id, started?.agent], [run.sessionId, "claude-laptop"], diagnosis());
  });

  it("PostToolUse recorded the file the model read on the service, relative to the project root", async () => {
    const query = { query: "files_for_task", params: { task_id: taskId } };
    const { files } = await direct(["call", "arbeit_query", JSON.stringify(query)]);
    assert.deepEqual(
      files.map((file: { file_path: string; operations: string[] }) => [file.file_path, file.operations]),
      [["login.ts", ["read"]]],
      diagnosis(),
    );
  });

  it("every hook went to the service, one request each, and the log names them", () => {
    const log = service.stderr();
    for (const hook of ["session-start", "user-prompt-submit", "post-tool-use", "session-end"])
      assert.match(log, new RegExp(`claude-laptop POST /api/hook ${hook} 200 ok`), log);
    assert.match(log, /claude-laptop POST \/api\/call arbeit_task_start_work 200 ok/);
    for (const request of proxy.requests) assert.match(request, /^POST \/api\/(call|hook)$/);
    assert.equal(proxy.requests.length, log.match(/ POST \/api\/(call|hook) /g)?.length);
  });
});
