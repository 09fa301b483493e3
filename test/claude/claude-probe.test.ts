import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { requirement } from "../helpers/requirements.js";
import {
  type ClaudeRun,
  type ClaudeSandbox,
  claudeMissing,
  claudeVersion,
  createSandbox,
  readJsonLines,
  runClaude,
  writeHookLogger,
  writeHookSettings,
  writeMcpJson,
  writeProbeMcpServer,
} from "./claude-harness.js";
import {
  type FakeAnthropic,
  firstUserText,
  lastUserText,
  type MessagesRequest,
  startFakeAnthropic,
  type Turn,
  textOf,
  toolNames,
  toolResults,
} from "./fake-anthropic.js";

/**
 * What the real Claude Code CLI shows hooks and MCP servers about sessions and sub-agents
 * (docs/claude-code-findings.md). One session, driven by a scripted fake API: the main agent
 * calls an MCP tool, writes a file and starts a sub-agent that reads, writes and calls the MCP
 * tool; then `--resume` with another MCP call, `/compact`, and `--resume` once more. Each run
 * takes a few seconds.
 */

const RUN_TIMEOUT_MS = 90_000;
const SUITE_TIMEOUT_MS = 5 * RUN_TIMEOUT_MS;
const EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "Stop",
  "SessionEnd",
];
const MCP_TOOL = "mcp__probe__probe_note";
const SUB_TASK = "SUBAGENT-TASK";
const SUMMARY = "SUMMARY-MARKER";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const AGENT_ID = /^a[0-9a-f]{16}$/;

const cannotRun = requirement("the real-Claude-Code probe", claudeMissing());

interface Hook {
  payload: Record<string, any>;
  sessionEnv: string | null;
  projectDirEnv: string | null;
  claudeEnv: Record<string, string>;
}

/** The scripted model: each step is chosen from the tool_use ids whose results came back. */
function script(project: string) {
  return (request: MessagesRequest): Turn => {
    const done = toolResults(request);
    const call = (id: string, name: string, input: Record<string, unknown>): Turn => ({
      tools: [{ id, name, input }],
    });
    // Compaction: the conversation plus a last user message asking for a summary.
    if (/detailed summary of the conversation/i.test(lastUserText(request))) {
      return { text: `${SUMMARY}: the main agent wrote main.txt; a sub-agent wrote sub.txt.` };
    }
    // The sub-agent's conversation starts with the prompt the main agent gave it.
    if (firstUserText(request).includes(SUB_TASK)) {
      if (!done.has("toolu_sub_read")) return call("toolu_sub_read", "Read", { file_path: join(project, "seed.txt") });
      if (!done.has("toolu_sub_write")) {
        return call("toolu_sub_write", "Write", { file_path: join(project, "sub.txt"), content: "by the sub-agent\n" });
      }
      if (!done.has("toolu_sub_mcp")) return call("toolu_sub_mcp", MCP_TOOL, { text: "from the sub-agent" });
      return { text: "SUB-DONE" };
    }
    const conversation = request.messages.map((message) => textOf(message.content)).join("\n");
    if (conversation.includes("AFTER-COMPACT")) {
      if (!done.has("toolu_after_mcp")) return call("toolu_after_mcp", MCP_TOOL, { text: "after compaction" });
      return { text: "AFTER-DONE" };
    }
    if (conversation.includes("RESUME-PROMPT")) {
      if (!done.has("toolu_resume_mcp")) return call("toolu_resume_mcp", MCP_TOOL, { text: "after resume" });
      return { text: "RESUME-DONE" };
    }
    if (conversation.includes("MAIN-PROMPT")) {
      if (!done.has("toolu_main_mcp")) return call("toolu_main_mcp", MCP_TOOL, { text: "from the main agent" });
      if (!done.has("toolu_main_write")) {
        return call("toolu_main_write", "Write", {
          file_path: join(project, "main.txt"),
          content: "by the main agent\n",
        });
      }
      if (!done.has("toolu_main_agent")) {
        // The tool that starts a sub-agent is "Agent" in the API's tools list ("Task" before).
        const agentTool = toolNames(request).includes("Agent") ? "Agent" : "Task";
        return call("toolu_main_agent", agentTool, {
          description: "probe sub-agent",
          prompt: `${SUB_TASK}: read seed.txt, write sub.txt, then call probe_note.`,
          subagent_type: "general-purpose",
        });
      }
      return { text: "MAIN-DONE" };
    }
    return { text: "OK" };
  };
}

describe("Claude Code, real binary: what hooks and MCP servers see", {
  skip: cannotRun,
  timeout: SUITE_TIMEOUT_MS,
}, () => {
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let hookLog: string;
  let mcpLog: string;
  const runs: Record<"main" | "resume" | "compact" | "after", ClaudeRun> = {} as any;
  /** Hook entries and MCP log entries written by each run, by run. */
  const hooksOf: Record<string, Hook[]> = {};
  const mcpOf: Record<string, any[]> = {};
  let sessionId: string;

  before(
    async () => {
      sandbox = createSandbox();
      const tools = join(sandbox.root, "tools");
      mkdirSync(tools);
      hookLog = join(sandbox.root, "hooks.jsonl");
      mcpLog = join(sandbox.root, "mcp.jsonl");
      writeHookSettings(sandbox.project, EVENTS, `"${process.execPath}" "${writeHookLogger(tools, hookLog)}"`);
      writeMcpJson(sandbox.project, "probe", writeProbeMcpServer(tools, mcpLog, hookLog));
      writeFileSync(join(sandbox.project, "seed.txt"), "seed for the sub-agent\n");
      fake = await startFakeAnthropic(script(sandbox.project));

      const steps: Array<[keyof typeof runs, string]> = [
        ["main", "MAIN-PROMPT: note, write main.txt, delegate."],
        ["resume", "RESUME-PROMPT: note again."],
        ["compact", "/compact"],
        ["after", "AFTER-COMPACT: note once more."],
      ];
      for (const [name, prompt] of steps) {
        const hooksBefore = readJsonLines(hookLog).length;
        const mcpBefore = readJsonLines(mcpLog).length;
        const run = await runClaude({
          sandbox,
          baseUrl: fake.baseUrl,
          prompt,
          resume: name === "main" ? undefined : sessionId,
          timeoutMs: RUN_TIMEOUT_MS,
        });
        runs[name] = run;
        assert.equal(run.timedOut, false, `${name}: claude did not finish in ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
        assert.equal(run.code, 0, `${name}: claude exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`);
        if (name === "main") sessionId = run.sessionId!;
        hooksOf[name] = readJsonLines(hookLog).slice(hooksBefore);
        mcpOf[name] = readJsonLines(mcpLog).slice(mcpBefore);
      }
    },
    { timeout: SUITE_TIMEOUT_MS },
  );

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  const hooks = (run: string, event: string) => hooksOf[run]!.filter((hook) => hook.payload.hook_event_name === event);
  const toolHook = (run: string, event: string, toolUseId: string) => {
    const found = hooks(run, event).find((hook) => hook.payload.tool_use_id === toolUseId);
    assert.ok(found, `${event} for ${toolUseId} in run ${run}`);
    return found;
  };
  const calls = (run: string) => mcpOf[run]!.filter((entry) => entry.kind === "call");

  it("ran the whole script in one session, with no API errors", () => {
    assert.match(claudeVersion(), /^\d+\.\d+\.\d+$/);
    assert.deepEqual(fake.errors, []);
    assert.match(sessionId, UUID);
    for (const [name, run] of Object.entries(runs)) {
      assert.equal(run.sessionId, sessionId, `${name} keeps the session id`);
      assert.equal(run.result?.is_error, false, name);
      assert.deepEqual(run.result?.permission_denials ?? [], [], name);
    }
    assert.equal(runs.main.result.result, "MAIN-DONE");
    assert.equal(runs.resume.result.result, "RESUME-DONE");
    assert.equal(runs.after.result.result, "AFTER-DONE");
    assert.equal(readFileSync(join(sandbox.project, "sub.txt"), "utf8"), "by the sub-agent\n");
  });

  it("gives hooks and the MCP server CLAUDE_CODE_SESSION_ID = session_id, also after --resume and /compact", () => {
    for (const run of Object.keys(runs)) {
      assert.ok(hooksOf[run]!.length > 0, run);
      for (const hook of hooksOf[run]!) {
        assert.equal(hook.payload.session_id, sessionId, `${run} ${hook.payload.hook_event_name} session_id`);
        assert.equal(hook.sessionEnv, sessionId, `${run} ${hook.payload.hook_event_name} CLAUDE_CODE_SESSION_ID`);
        assert.equal(hook.projectDirEnv, sandbox.project);
      }
      // Every run starts its own MCP server process, with the same session id in its env.
      const starts = mcpOf[run]!.filter((entry) => entry.kind === "start");
      assert.equal(starts.length, 1, `${run}: one MCP server start`);
      assert.equal(starts[0].sessionEnv, sessionId, `${run}: MCP server CLAUDE_CODE_SESSION_ID`);
    }
    assert.deepEqual(
      hooks("main", "SessionStart").map((hook) => hook.payload.source),
      ["startup"],
    );
    assert.deepEqual(
      hooks("resume", "SessionStart").map((hook) => hook.payload.source),
      ["resume"],
    );
    assert.deepEqual(
      hooks("after", "SessionStart").map((hook) => hook.payload.source),
      ["resume"],
    );
    for (const call of [...calls("main"), ...calls("resume"), ...calls("after")])
      assert.equal(call.sessionEnv, sessionId);
  });

  it("marks a sub-agent's tool calls with agent_id and agent_type; session_id and transcript_path stay the parent's", () => {
    const [start] = hooks("main", "SubagentStart");
    assert.ok(start, "SubagentStart fired");
    const agentId = start.payload.agent_id;
    assert.match(agentId, AGENT_ID);
    assert.equal(start.payload.agent_type, "general-purpose");
    const main = toolHook("main", "PostToolUse", "toolu_main_write").payload;
    assert.equal("agent_id" in main, false, "the main agent's calls carry no agent_id");
    assert.equal("agent_type" in main, false);
    for (const id of ["toolu_sub_read", "toolu_sub_write", "toolu_sub_mcp"]) {
      for (const event of ["PreToolUse", "PostToolUse"]) {
        const payload = toolHook("main", event, id).payload;
        assert.equal(payload.agent_id, agentId, `${event} ${id} agent_id`);
        assert.equal(payload.agent_type, "general-purpose", `${event} ${id} agent_type`);
        assert.equal(payload.session_id, sessionId);
        assert.equal(payload.transcript_path, main.transcript_path);
      }
    }
    const write = toolHook("main", "PostToolUse", "toolu_sub_write").payload;
    assert.equal(write.tool_name, "Write");
    assert.equal(write.tool_input.file_path, join(sandbox.project, "sub.txt"));
    assert.equal(write.tool_response.filePath, join(sandbox.project, "sub.txt"));
    const mcp = toolHook("main", "PostToolUse", "toolu_sub_mcp").payload;
    assert.equal(mcp.tool_name, MCP_TOOL);
    assert.deepEqual(mcp.tool_response, [{ type: "text", text: 'noted "from the sub-agent"' }]);
  });

  it("reports SubagentStart/SubagentStop and the Agent tool's result with the same agent id", () => {
    const [start] = hooks("main", "SubagentStart");
    const [stop] = hooks("main", "SubagentStop");
    assert.ok(start && stop);
    const agentId = start.payload.agent_id;
    for (const key of ["session_id", "transcript_path", "cwd", "agent_id", "agent_type", "hook_event_name"]) {
      assert.ok(key in start.payload, `SubagentStart has ${key}`);
    }
    assert.equal(stop.payload.agent_id, agentId);
    assert.equal(stop.payload.agent_type, "general-purpose");
    assert.equal(stop.payload.last_assistant_message, "SUB-DONE");
    assert.equal(stop.payload.stop_hook_active, false);
    const transcript = stop.payload.transcript_path.replace(/\.jsonl$/, "");
    assert.equal(stop.payload.agent_transcript_path, join(transcript, "subagents", `agent-${agentId}.jsonl`));
    // The tool that started it: "Agent" in hooks, its result names the agent.
    const agentCall = toolHook("main", "PostToolUse", "toolu_main_agent").payload;
    assert.equal(agentCall.tool_name, "Agent");
    assert.equal("agent_id" in agentCall, false);
    assert.equal(agentCall.tool_response.agentId, agentId);
    // stream-json: the sub-agent's messages point at the Agent tool_use; task_started names the agent.
    const subMessages = runs.main.events.filter((event) => event.parent_tool_use_id === "toolu_main_agent");
    assert.ok(subMessages.length >= 3);
    const task = runs.main.events.find((event) => event.subtype === "task_started");
    assert.equal(task?.task_id, agentId);
    assert.equal(task?.tool_use_id, "toolu_main_agent");
    // The API's tools list says "Agent"; the init event still lists "Task".
    assert.ok(toolNames(fake.requests[0]!).includes("Agent"));
    const init = runs.main.events.find((event) => event.subtype === "init");
    assert.ok(init.tools.includes("Task"));
  });

  it("sends the MCP server no agent identity, only the tool_use_id, which a PreToolUse hook maps to agent_id", () => {
    const [mainCall, subCall] = calls("main");
    assert.ok(mainCall && subCall);
    assert.equal(mainCall.args.text, "from the main agent");
    assert.equal(subCall.args.text, "from the sub-agent");
    assert.equal(mainCall.meta["claudecode/toolUseId"], "toolu_main_mcp");
    assert.equal(subCall.meta["claudecode/toolUseId"], "toolu_sub_mcp");
    // Nothing else: same process, same env, _meta keys identical in shape.
    assert.deepEqual(Object.keys(subCall.meta).sort(), ["claudecode/toolUseId", "progressToken"]);
    assert.deepEqual(Object.keys(mainCall.meta).sort(), Object.keys(subCall.meta).sort());
    assert.equal(mainCall.sessionEnv, subCall.sessionEnv);
    const messages = mcpOf.main!.filter((entry) => entry.kind === "message").map((entry) => entry.message);
    const initialize = messages.find((message) => message.method === "initialize");
    assert.equal(initialize?.params.clientInfo.name, "claude-code");
    // The PreToolUse hook ran, and logged, before the MCP server got the call.
    const [start] = hooks("main", "SubagentStart");
    assert.deepEqual(subCall.preToolUse, { agent_id: start!.payload.agent_id, agent_type: "general-purpose" });
    assert.deepEqual(mainCall.preToolUse, { agent_id: null, agent_type: null });
    // MCP server env: no CLAUDE_CODE_CHILD_SESSION or CLAUDE_ENV_FILE (hooks get the former).
    const [serverStart] = mcpOf.main!.filter((entry) => entry.kind === "start");
    assert.equal(serverStart.claudeEnv.CLAUDE_PROJECT_DIR, sandbox.project);
    assert.equal(serverStart.claudeEnv.CLAUDE_CODE_CHILD_SESSION, undefined);
  });

  it("/compact fires PreCompact, SubagentStop(s) with empty agent_type, SessionStart(compact), PostCompact", () => {
    const names = hooksOf.compact!.map((hook) => hook.payload.hook_event_name);
    const sources = hooks("compact", "SessionStart").map((hook) => hook.payload.source);
    assert.deepEqual(sources, ["resume", "compact"]);
    const at = (event: string, source?: string) =>
      hooksOf.compact!.findIndex(
        (hook) => hook.payload.hook_event_name === event && (source === undefined || hook.payload.source === source),
      );
    assert.ok(at("PreCompact") > at("SessionStart", "resume"), names.join(" "));
    assert.ok(at("SessionStart", "compact") > at("PreCompact"), names.join(" "));
    assert.ok(at("PostCompact") > at("PreCompact"), names.join(" "));
    assert.equal(names.includes("UserPromptSubmit"), false, "/compact is no prompt");
    const pre = hooks("compact", "PreCompact")[0]!.payload;
    assert.equal(pre.trigger, "manual");
    assert.equal(pre.custom_instructions, null);
    // The summary is written by a forked agent: SubagentStop without SubagentStart, agent_type "".
    assert.equal(hooks("compact", "SubagentStart").length, 0);
    const stops = hooks("compact", "SubagentStop");
    assert.ok(stops.length >= 1);
    for (const { payload } of stops) {
      assert.match(payload.agent_id, AGENT_ID);
      assert.equal(payload.agent_type, "");
      assert.match(payload.last_assistant_message, new RegExp(SUMMARY));
    }
    const post = hooks("compact", "PostCompact")[0]!.payload;
    assert.equal(post.trigger, "manual");
    assert.match(post.compact_summary, new RegExp(SUMMARY));
    // After compaction the conversation restarts from the summary: the earlier tool ids are gone.
    const afterRequest = fake.requests.find((request) => toolResults(request).has("toolu_after_mcp"));
    assert.ok(afterRequest);
    assert.equal(toolResults(afterRequest).has("toolu_main_mcp"), false);
    assert.match(firstUserText(afterRequest), new RegExp(SUMMARY));
  });
});

describe("Claude Code, real binary: two sub-agents at once", { skip: cannotRun, timeout: 2 * RUN_TIMEOUT_MS }, () => {
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let run: ClaudeRun;
  let hookEntries: Hook[];
  let mcpCalls: any[];
  const SUBS = ["SUB-A", "SUB-B"] as const;

  before(
    async () => {
      sandbox = createSandbox();
      const tools = join(sandbox.root, "tools");
      mkdirSync(tools);
      const hookLog = join(sandbox.root, "hooks.jsonl");
      const mcpLog = join(sandbox.root, "mcp.jsonl");
      const logger = writeHookLogger(tools, hookLog, ["SubagentStart", "PostToolUse"]);
      writeHookSettings(sandbox.project, EVENTS, `"${process.execPath}" "${logger}"`);
      writeMcpJson(sandbox.project, "probe", writeProbeMcpServer(tools, mcpLog, hookLog));
      const project = sandbox.project;
      fake = await startFakeAnthropic((request) => {
        const done = toolResults(request);
        for (const tag of SUBS) {
          if (!firstUserText(request).includes(tag)) continue;
          const key = tag.toLowerCase();
          if (!done.has(`toolu_${key}_write`)) {
            const input = { file_path: join(project, `${key}.txt`), content: `${key}\n` };
            return { tools: [{ id: `toolu_${key}_write`, name: "Write", input }] };
          }
          if (!done.has(`toolu_${key}_mcp`)) {
            return { tools: [{ id: `toolu_${key}_mcp`, name: MCP_TOOL, input: { text: key } }] };
          }
          return { text: `${tag}-DONE` };
        }
        if (!done.has("toolu_agents")) {
          // Two Agent calls in one turn: Claude Code runs them concurrently.
          return {
            tools: SUBS.map((tag, index) => ({
              id: index === 0 ? "toolu_agents" : "toolu_agents_2",
              name: "Agent",
              input: {
                description: tag,
                prompt: `${tag}: write a file, call probe_note.`,
                subagent_type: "general-purpose",
              },
            })),
          };
        }
        return { text: "PARALLEL-DONE" };
      });
      run = await runClaude({
        sandbox,
        baseUrl: fake.baseUrl,
        prompt: "Start two sub-agents.",
        timeoutMs: RUN_TIMEOUT_MS,
      });
      assert.equal(run.timedOut, false, `claude did not finish in ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
      assert.equal(run.code, 0, `claude exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`);
      hookEntries = readJsonLines(hookLog);
      mcpCalls = readJsonLines(mcpLog).filter((entry) => entry.kind === "call");
    },
    { timeout: 2 * RUN_TIMEOUT_MS },
  );

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  /** agent_id of the sub-agent whose conversation started with `tag`, from its own tool hooks. */
  const agentOf = (tag: string) => {
    const id = `toolu_${tag.toLowerCase()}_write`;
    const hook = hookEntries.find(
      (entry) => entry.payload.tool_use_id === id && entry.payload.hook_event_name === "PostToolUse",
    );
    assert.ok(hook, id);
    return hook.payload.agent_id as string;
  };

  it("gives each sub-agent its own agent_id, on its tool hooks and (through PreToolUse) its MCP calls", () => {
    assert.deepEqual(fake.errors, []);
    assert.equal(run.result?.result, "PARALLEL-DONE");
    const [a, b] = SUBS.map(agentOf);
    assert.match(a!, AGENT_ID);
    assert.match(b!, AGENT_ID);
    assert.notEqual(a, b);
    const starts = hookEntries.filter((entry) => entry.payload.hook_event_name === "SubagentStart");
    assert.deepEqual(starts.map((entry) => entry.payload.agent_id).sort(), [a, b].sort());
    for (const [tag, agent] of [
      [SUBS[0], a],
      [SUBS[1], b],
    ] as const) {
      const call = mcpCalls.find((entry) => entry.meta["claudecode/toolUseId"] === `toolu_${tag.toLowerCase()}_mcp`);
      assert.deepEqual(call?.preToolUse, { agent_id: agent, agent_type: "general-purpose" });
    }
  });

  it("tells SubagentStart nothing that links it to its Agent tool call", () => {
    for (const entry of hookEntries.filter((hook) => hook.payload.hook_event_name === "SubagentStart")) {
      for (const key of ["tool_use_id", "prompt", "description", "parent_tool_use_id"]) {
        assert.equal(
          key in entry.payload,
          false,
          `SubagentStart now carries ${key}: update docs/claude-code-findings.md`,
        );
      }
    }
    // Only the Agent call's PostToolUse names the agent it ran (2.1.197: when the sub-agent has
    // finished; 2.1.332 runs sub-agents in the background by default and it comes at launch).
    const posts = hookEntries.filter(
      (hook) => hook.payload.hook_event_name === "PostToolUse" && hook.payload.tool_name === "Agent",
    );
    assert.deepEqual(posts.map((hook) => hook.payload.tool_response.agentId).sort(), SUBS.map(agentOf).sort());
  });

  it("delivers SubagentStart and a sub-agent's PostToolUse additionalContext to that sub-agent only", () => {
    for (const tag of SUBS) {
      const agent = agentOf(tag);
      const other = agentOf(tag === "SUB-A" ? "SUB-B" : "SUB-A");
      const last = fake.requests.filter((request) => firstUserText(request).includes(tag)).at(-1);
      assert.ok(last);
      const text = JSON.stringify(last.messages);
      assert.ok(text.includes(`SubagentStart hook additional context: CTX SubagentStart ${agent} -`), tag);
      assert.ok(text.includes(`CTX PostToolUse ${agent} toolu_${tag.toLowerCase()}_write`), tag);
      assert.equal(text.includes(other), false, `${tag} sees nothing of the other sub-agent`);
    }
    const main = fake.requests.filter((request) => toolResults(request).has("toolu_agents")).at(-1);
    assert.ok(main);
    const mainText = JSON.stringify(main.messages);
    assert.equal(mainText.includes("CTX SubagentStart"), false, "the parent does not get SubagentStart context");
    assert.ok(mainText.includes("CTX PostToolUse main toolu_agents"));
  });
});
