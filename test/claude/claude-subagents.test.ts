import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { ANONYMOUS } from "../../src/service/caller.js";
import { CLI } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { type ArbeitProject, setUpArbeitProject } from "./arbeit-project.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import {
  type FakeAnthropic,
  firstUserText,
  type MessagesRequest,
  startFakeAnthropic,
  type Turn,
  textOf,
  toolNames,
  toolResults,
} from "./fake-anthropic.js";

/**
 * A Claude Code sub-agent is a session of its own (docs/claude-code.md, docs/multi-agent.md),
 * proven with the real CLI after `arbeit setup claude` in a fresh project. One conversation,
 * driven by a scripted fake API (fake-anthropic.ts): the main agent starts work on one task and
 * writes a file, then launches one sub-agent with the `Agent` tool; the sub-agent starts work on
 * another task and writes a file of its own. The sub-agent's MCP call reaches the one `arbeit mcp`
 * server of the conversation with nothing but its tool_use_id, so only the PreToolUse hook's note
 * (`.arbeit/subagent-calls/<tool_use_id>`) can make it act as `<session>/<agent_id>`; without
 * it the sub-agent would be the main session, which already works on a task (ALREADY_WORKING).
 * The run takes a few seconds.
 *
 * `npx arbeit ...` (what setup writes) resolves to this checkout exactly as in
 * claude-code.test.ts: `npm install --save-dev /path/to/arbeit`, offline.
 */

const RUN_TIMEOUT_MS = 90_000;
const SUITE_TIMEOUT_MS = RUN_TIMEOUT_MS + 2 * 60_000;
const ALLOWED_TOOLS = ["mcp__arbeit__*", "Read", "Write", "Edit", "Agent"];
const START_WORK = "mcp__arbeit__arbeit_task_start_work";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const AGENT_ID = /^a[0-9a-f]{16}$/;
/** The sub-agent's conversation is the one whose first user message (its prompt) has this. */
const SUB_MARKER = "SUBAGENT-TASK-3K";
const MAIN_MARKER = "MAIN-PROMPT-3K";
const MAIN_FILE = "main.txt";
const SUB_FILE = "sub.txt";

const cannotRun = requirement("the real-Claude-Code sub-agent test", claudeMissing());

/** The JSON envelope in an MCP tool_result's text. */
function envelopeOf(text: string): any {
  const start = text.indexOf("{");
  assert.ok(start >= 0, `no JSON envelope in the tool result: ${text}`);
  return JSON.parse(text.slice(start));
}

describe("Claude Code, real binary, with Arbeit set up: a sub-agent works as a session of its own", {
  skip: cannotRun,
  timeout: SUITE_TIMEOUT_MS,
}, () => {
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let project: string;
  let mainTaskId: string;
  let subTaskId: string;
  let run: ClaudeRun;
  /** The conversation's session id (stream-json init). */
  let sessionId: string;
  let agentToolName: string;

  /** The scripted model: each turn is chosen from the first prompt and the tool results that came back. */
  function script(request: MessagesRequest): Turn {
    const done = toolResults(request);
    const call = (id: string, name: string, input: Record<string, unknown>): Turn => ({ tools: [{ id, name, input }] });
    if (firstUserText(request).includes(SUB_MARKER)) {
      if (!done.has("toolu_sub_start")) return call("toolu_sub_start", START_WORK, { task_id: subTaskId });
      if (!done.has("toolu_sub_write")) {
        return call("toolu_sub_write", "Write", { file_path: join(project, SUB_FILE), content: "by the sub-agent\n" });
      }
      return { text: "SUB-DONE" };
    }
    const conversation = request.messages.map((message) => textOf(message.content)).join("\n");
    if (!conversation.includes(MAIN_MARKER)) return { text: "OK" };
    if (!done.has("toolu_main_start")) return call("toolu_main_start", START_WORK, { task_id: mainTaskId });
    if (!done.has("toolu_main_write")) {
      return call("toolu_main_write", "Write", { file_path: join(project, MAIN_FILE), content: "by the main agent\n" });
    }
    if (!done.has("toolu_main_agent")) {
      // The tool that starts a sub-agent: "Agent" in the API's tools list ("Task" before).
      const tools = toolNames(request);
      agentToolName = tools.includes("Agent") ? "Agent" : "Task";
      const schema = request.tools?.find((tool) => tool.name === agentToolName)?.input_schema as any;
      return call("toolu_main_agent", agentToolName, {
        description: "sub-agent task",
        prompt: `${SUB_MARKER}: start work on the sub-agent task, write ${SUB_FILE}, then answer.`,
        subagent_type: "general-purpose",
        // Versions that run sub-agents in the background by default: this one runs in the foreground.
        ...(schema?.properties?.run_in_background ? { run_in_background: false } : {}),
      });
    }
    return { text: "MAIN-DONE" };
  }

  let setup: ArbeitProject;
  const arbeit = (...args: string[]) => setup.arbeit(...args);
  const withStore = <T>(read: (service: ArbeitService) => Promise<T>) => setup.withStore(read);
  const getTask = (id: string) => setup.getTask(id);

  /** `[file_path, operation, session_id]` of the task's file_tracked events. */
  const trackedFiles = (id: string) =>
    withStore(async (service) => {
      const params = { task_id: id, event_types: ["file_tracked"] };
      const data = (await service.query({ query: "events", params }, ANONYMOUS)).data as any;
      return data.events.map((event: any) => [event.payload.file_path, event.payload.operation, event.session_id]);
    });

  /** The last API request of the sub-agent's conversation. */
  const lastSubRequest = () => {
    const last = fake.requests.filter((request) => firstUserText(request).includes(SUB_MARKER)).at(-1);
    assert.ok(last, "the sub-agent made API requests");
    return last;
  };

  /** The sub-agent's id, from the conversation's own record of it (stream-json task_started). */
  const agentIdOfRun = (): string => {
    const started = run.events.filter((event) => event.subtype === "task_started");
    assert.equal(started.length, 1, "one sub-agent started");
    assert.equal(started[0].tool_use_id, "toolu_main_agent");
    return started[0].task_id;
  };

  before(
    async () => {
      sandbox = createSandbox();
      project = sandbox.project;
      // Arbeit not installed in the project: setup writes this checkout's CLI by absolute path.
      setup = await setUpArbeitProject(sandbox, "e2e-subagents", { install: false });
      mainTaskId = (await arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Main task" }))).task.id;
      subTaskId = (await arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Sub-agent task" }))).task.id;
      fake = await startFakeAnthropic(script);
      run = await runClaude({
        sandbox,
        baseUrl: fake.baseUrl,
        prompt: `${MAIN_MARKER}: start the main task, write ${MAIN_FILE}, delegate the sub-agent task.`,
        allowedTools: ALLOWED_TOOLS,
        permissionMode: "acceptEdits",
        env: { ENABLE_TOOL_SEARCH: "false" },
        timeoutMs: RUN_TIMEOUT_MS,
      });
      assert.equal(run.timedOut, false, `claude did not finish in ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
      assert.equal(run.code, 0, `claude exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`);
      sessionId = run.sessionId!;
    },
    { timeout: SUITE_TIMEOUT_MS },
  );

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  it("setup wrote this checkout's CLI by absolute path for the hooks and the MCP server", () => {
    const mcp = JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8"));
    assert.deepEqual(mcp.mcpServers.arbeit, { command: realpathSync(CLI), args: ["mcp"] });
    const { hooks } = JSON.parse(readFileSync(join(project, ".claude", "settings.json"), "utf8"));
    // Guarded: silent where the installation is gone.
    const cli = realpathSync(CLI);
    assert.equal(hooks.PreToolUse[0].hooks[0].command, `[ ! -x ${cli} ] || ${cli} hook pre-tool-use`);
    assert.ok(!existsSync(join(project, "node_modules")));
  });

  it("ran the script: the main agent delegated to one sub-agent with the Agent tool; both wrote their file", () => {
    assert.deepEqual(fake.errors, []);
    assert.match(sessionId, UUID, "stream-json init session_id");
    assert.equal(run.result?.is_error, false, JSON.stringify(run.result));
    assert.deepEqual(run.result?.permission_denials ?? [], []);
    assert.equal(run.result?.result, "MAIN-DONE");
    assert.equal(agentToolName, "Agent", "the API's tools list names the sub-agent tool Agent");
    assert.equal(readFileSync(join(project, MAIN_FILE), "utf8"), "by the main agent\n");
    assert.equal(readFileSync(join(project, SUB_FILE), "utf8"), "by the sub-agent\n");
    assert.match(agentIdOfRun(), AGENT_ID);
    // The sub-agent finished before the main agent did (it ran in the foreground).
    const results = toolResults(lastSubRequest());
    assert.ok(results.has("toolu_sub_start") && results.has("toolu_sub_write"));
    const mainLast = fake.requests.filter((request) => toolResults(request).has("toolu_main_agent")).at(-1);
    assert.ok(mainLast, "the Agent call's result came back to the main agent");
    assert.match(toolResults(mainLast).get("toolu_main_agent")!.text, /SUB-DONE/);
    // Every Arbeit hook (PreToolUse notes, PostToolUse file tracking, SessionStart) ran cleanly.
    const responses = run.events.filter((event) => event.subtype === "hook_response");
    assert.ok(responses.length > 0, "stream-json has the hook responses");
    for (const response of responses) {
      assert.equal(response.exit_code, 0, `${response.hook_name} exit code\n${response.stderr}`);
      assert.equal(response.stderr, "", `${response.hook_name} stderr`);
    }
  });

  it("the main agent's start_work claims Main task for the conversation's session", async () => {
    const started = envelopeOf(toolResults(fake.requests.at(-1)!).get("toolu_main_start")!.text);
    assert.equal(started.success, true, JSON.stringify(started));
    assert.equal(started.data.session_id, sessionId);
    const data = await getTask(mainTaskId);
    assert.equal(data.task.title, "Main task");
    assert.equal(data.task.status, "in_progress");
    // Claimed while the run lasted; the run's SessionEnd handed the claim back.
    assert.equal(started.data.task.claim_session, sessionId);
    assert.equal(data.task.claim_session, null);
    assert.deepEqual(
      data.sessions!.map((link) => [link.session_id, link.agent]),
      [[sessionId, "claude-code"]],
      "the sub-agent never worked on Main task",
    );
  });

  it("the sub-agent's start_work succeeds (no ALREADY_WORKING) and claims Sub-agent task for `<session>/<agent_id>`", async () => {
    const agentId = agentIdOfRun();
    const subSession = `${sessionId}/${agentId}`;
    const result = toolResults(lastSubRequest()).get("toolu_sub_start")!;
    assert.equal(result.isError, false, result.text);
    assert.equal(result.text.includes("ALREADY_WORKING"), false, result.text);
    const started = envelopeOf(result.text);
    assert.equal(started.success, true, JSON.stringify(started));
    assert.equal(started.data.session_id, subSession);

    assert.equal(started.data.task.claim_session, subSession);
    const [, claimedBy] = started.data.task.claim_session.split("/");
    assert.match(claimedBy ?? "", AGENT_ID);

    const data = await getTask(subTaskId);
    assert.equal(data.task.title, "Sub-agent task");
    assert.equal(data.task.status, "in_progress");
    assert.deepEqual(
      data.sessions!.map((link) => [link.session_id, link.agent]),
      [[subSession, "claude-code"]],
    );
  });

  it("SubagentStart and SubagentStop are recorded for `<session>/<agent_id>`; SubagentStop ended its work with a handoff", async () => {
    const subSession = `${sessionId}/${agentIdOfRun()}`;
    const recorded = await setup.withStore((service) =>
      service.store.read((tx) =>
        tx.listEvents({ after_seq: 0, event_types: ["subagent_started", "subagent_stopped"], limit: 10 }),
      ),
    );
    assert.deepEqual(
      recorded.map((event) => [event.event_type, event.entity_id, event.task_id, event.payload.stopped_work_on]),
      [
        ["subagent_started", subSession, mainTaskId, undefined],
        // Recorded once its own work has ended: on the conversation's task, naming the one it stopped.
        ["subagent_stopped", subSession, mainTaskId, subTaskId],
      ],
    );
    const { data } = await setup.withStore((service) => service.getTask({ task_id: subTaskId, include: ["context"] }));
    assert.equal(data.task.claim_session, null, "its claim was handed back");
    assert.match(
      data.context!.at(-1)!.content,
      new RegExp(`^Handoff: session ${subSession} ended \\(sub-agent stopped\\)`),
    );
  });

  it("each agent's Write is recorded on its own task, under its own session", async () => {
    const subSession = `${sessionId}/${agentIdOfRun()}`;
    const sub = await getTask(subTaskId);
    assert.deepEqual(
      sub.files!.map((file) => [file.file_path, file.operations, file.sessions]),
      [[SUB_FILE, ["write"], 1]],
    );
    assert.deepEqual(await trackedFiles(subTaskId), [[SUB_FILE, "write", subSession]]);
    const main = await getTask(mainTaskId);
    assert.deepEqual(
      main.files!.map((file) => [file.file_path, file.operations, file.sessions]),
      [[MAIN_FILE, ["write"], 1]],
    );
    assert.deepEqual(await trackedFiles(mainTaskId), [[MAIN_FILE, "write", sessionId]]);
  });

  it("the MCP server took the PreToolUse hook's note: .arbeit/subagent-calls/ is left empty", () => {
    const folder = join(project, ".arbeit", "subagent-calls");
    assert.ok(existsSync(folder), "the PreToolUse hook left a note for the sub-agent's call");
    assert.deepEqual(readdirSync(folder), []);
  });
});
