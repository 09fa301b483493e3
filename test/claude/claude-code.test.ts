import assert from "node:assert/strict";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Task } from "../../src/domain/types.js";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { ANONYMOUS } from "../../src/service/caller.js";
import { requirement } from "../helpers/requirements.js";
import { type ArbeitProject, setUpArbeitProject } from "./arbeit-project.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, REPO, runClaude } from "./claude-harness.js";
import {
  type FakeAnthropic,
  firstUserText,
  lastUserText,
  type Message,
  type MessagesRequest,
  startFakeAnthropic,
  systemText,
  type Turn,
  textOf,
  toolResults,
} from "./fake-anthropic.js";

/**
 * Arbeit set up for the real Claude Code CLI, end to end (docs/claude-code.md): `arbeit setup
 * claude` in a fresh project, then headless conversations against a scripted fake API
 * (fake-anthropic.ts). The model starts work through the `arbeit` MCP server and touches files;
 * the store must show the claim, the work and the files under Claude Code's session id. A
 * `--resume` must be briefed on the task by the SessionStart hook, `/compact` must carry the
 * briefing into the summary instructions (PreCompact) and brief the compacted conversation again
 * (SessionStart `compact`), and two conversations racing for one task must end with exactly one
 * holder. The other hooks are checked on the same runs: the prompt logged, a `git commit` through
 * Bash recorded on the task, a failing Bash call kept as an attempt, the handoff SessionEnd writes
 * at the end of each run, the compaction PostCompact marks. Each run takes a few seconds.
 *
 * Setup writes `npx arbeit ...` for the hooks and the MCP server. The test makes that resolve to
 * this checkout the way docs/claude-code.md says to install it, `npm install --save-dev
 * /path/to/arbeit` (offline: it only links the folder into node_modules and node_modules/.bin).
 */

const RUN_TIMEOUT_MS = 60_000;
const SUITE_TIMEOUT_MS = 8 * RUN_TIMEOUT_MS;
const ALLOWED_TOOLS = ["mcp__arbeit__*", "Read", "Write", "Edit", "Bash"];
const START_WORK = "mcp__arbeit__arbeit_task_start_work";
const CONTEXT_ADD = "mcp__arbeit__arbeit_context_add";
const CLAIM = "mcp__arbeit__arbeit_task_claim";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const TASK = {
  title: "Add rate limiting to the API",
  type: "feature",
  intent: "INTENT-7Q: abusive clients must not starve the others",
  description: "A token bucket per API key.",
  plan: "PLAN-7Q: 1. bucket in limiter.ts 2. wire into the router 3. tests",
};
const RACE_TASK = { title: "Rotate the signing keys", intent: "Old keys leaked in a log dump" };
/** Added to the task between `/compact` and the next run: a briefing without it predates that run. */
const LATE_NOTE = "NOTE-AFTER-COMPACT-7Q";
const SUMMARY = "SUMMARY-7Q: the agent started work on the task, wrote limiter.ts and read router.ts.";
const WRITTEN = "limiter.ts";
const READ = "router.ts";
const RACERS = ["RACE-A", "RACE-B"] as const;
const COMMIT_SUBJECT = "Add the rate limiter";
const COMMIT_COMMAND = `git init -q && git add ${WRITTEN} && git -c user.name=Agent -c user.email=agent@example.com commit -m "${COMMIT_SUBJECT}"`;
const FAILING_COMMAND = "cat no-such-file.txt";
const HOOK_CONTEXT = "SessionStart hook additional context: ";
/** The task a conversation asks a question on, the question (a blocker) and a person's answer. */
const ASK_TASK = { title: "Pick the store for the rate buckets", intent: "Buckets must survive a restart" };
const QUESTION = "QUESTION-7Q: Redis or Postgres for the buckets?";
const ANSWER = "ANSWER-7Q: Postgres, we run it already.";

const cannotRun = requirement("the real-Claude-Code end-to-end test", claudeMissing());

/** The text of one message (string or blocks, tool_results included). */
const messageText = (message: Message) => textOf(message.content);

/** The JSON envelope in an MCP tool_result's text. */
function envelopeOf(text: string): any {
  const start = text.indexOf("{");
  assert.ok(start >= 0, `no JSON envelope in the tool result: ${text}`);
  return JSON.parse(text.slice(start));
}

/** additionalContext of the SessionStart hook responses of a run, by source (stream-json hook events). */
function sessionStartContexts(run: ClaudeRun, source: string): string[] {
  return run.events
    .filter((event) => event.subtype === "hook_response" && event.hook_name === `SessionStart:${source}`)
    .map((event) => JSON.parse(event.output).hookSpecificOutput.additionalContext as string);
}

/** Every Arbeit hook of a run finished with exit 0 and no "arbeit: ... hook skipped" on stderr. */
function assertHooksClean(run: ClaudeRun, label: string): void {
  const responses = run.events.filter((event) => event.subtype === "hook_response");
  for (const response of responses) {
    assert.equal(response.exit_code, 0, `${label}: ${response.hook_name} exit code\n${response.stderr}`);
    assert.equal(response.stderr, "", `${label}: ${response.hook_name} stderr`);
  }
}

function assertRunOk(run: ClaudeRun, label: string): void {
  assert.equal(run.timedOut, false, `${label}: claude did not finish in ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
  assert.equal(run.code, 0, `${label}: claude exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`);
  assert.equal(run.result?.is_error, false, `${label}: ${JSON.stringify(run.result)}`);
  assert.deepEqual(run.result?.permission_denials ?? [], [], label);
  assert.match(run.sessionId ?? "", UUID, `${label}: stream-json init session_id`);
}

describe("Claude Code, real binary, with Arbeit set up: sessions, briefings, files and claims", {
  skip: cannotRun,
  timeout: SUITE_TIMEOUT_MS,
}, () => {
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let project: string;
  let taskId: string;
  let raceTaskId: string;
  let askTaskId: string;
  /** The person's answer, given once, while the model thinks about the step after its question. */
  let answering: Promise<void> | undefined;
  /** Conversation 1's session id (stream-json init), kept across --resume and /compact. */
  let sessionId: string;
  const runs: Partial<Record<"work" | "resume" | "compact" | "after", ClaudeRun>> = {};
  /** The API requests each run made, by run. */
  const requestsOf: Record<string, MessagesRequest[]> = {};

  /** `human:alice` answers the question (the blocker entry in `blockerResult`) from the CLI. */
  function personAnswers(blockerResult: string): Promise<void> {
    answering ??= (async () => {
      const blocker = envelopeOf(blockerResult).data.entry.id as string;
      const answer = { task_id: askTaskId, type: "user_input", content: ANSWER, supersede_entry_id: blocker };
      await arbeit("call", "arbeit_context_add", JSON.stringify(answer), "--agent", "human:alice");
    })();
    return answering;
  }

  /** The scripted model: each turn is chosen from the prompt and the tool results that came back. */
  const finishedRacers = new Set<string>();
  const bothFinished: Array<() => void> = [];
  /** Resolves once every racer has had its start_work and claim answered (or after 60 s). */
  function racersFinished(tag: string): Promise<void> {
    finishedRacers.add(tag);
    if (finishedRacers.size === RACERS.length) for (const release of bothFinished.splice(0)) release();
    if (finishedRacers.size === RACERS.length) return Promise.resolve();
    return new Promise((resolve) => {
      bothFinished.push(resolve);
      setTimeout(resolve, 60_000).unref();
    });
  }

  function script(request: MessagesRequest): Turn | Promise<Turn> {
    const done = toolResults(request);
    const call = (id: string, name: string, input: Record<string, unknown>): Turn => ({ tools: [{ id, name, input }] });
    // Compaction (docs/claude-code-findings.md): only the text blocks of the last user message.
    if (/detailed summary of the conversation/i.test(lastUserText(request))) return { text: SUMMARY };
    const first = firstUserText(request);
    for (const tag of RACERS) {
      if (!first.includes(tag)) continue;
      const key = tag.toLowerCase().replace("-", "_");
      if (!done.has(`toolu_${key}_start`)) return call(`toolu_${key}_start`, START_WORK, { task_id: raceTaskId });
      if (!done.has(`toolu_${key}_claim`)) return call(`toolu_${key}_claim`, CLAIM, { task_id: raceTaskId });
      // Both conversations run until both have tried: a run's end hands its claim back.
      return racersFinished(tag).then(() => ({ text: `${tag}-DONE` }));
    }
    if (first.includes("ASK-PROMPT")) {
      if (lastUserText(request).includes("ASK-AGAIN-PROMPT")) return { text: "ASK-AGAIN-DONE" };
      if (!done.has("toolu_ask_start")) return call("toolu_ask_start", START_WORK, { task_id: askTaskId });
      if (!done.has("toolu_ask_blocker")) {
        return call("toolu_ask_blocker", CONTEXT_ADD, { task_id: askTaskId, type: "blocker", content: QUESTION });
      }
      // The person answers while the model works out its next step: a Read, whose PostToolUse tells it.
      if (!done.has("toolu_ask_read")) {
        const read = call("toolu_ask_read", "Read", { file_path: join(project, READ) });
        return personAnswers(done.get("toolu_ask_blocker")!.text).then(() => read);
      }
      return { text: "ASK-DONE" };
    }
    const conversation = request.messages.map(messageText).join("\n");
    if (conversation.includes("AFTER-COMPACT-PROMPT")) return { text: "AFTER-DONE" };
    if (conversation.includes("RESUME-PROMPT")) return { text: "RESUME-DONE" };
    if (conversation.includes("WORK-PROMPT")) {
      if (!done.has("toolu_work_start")) return call("toolu_work_start", START_WORK, { task_id: taskId });
      if (!done.has("toolu_work_write")) {
        return call("toolu_work_write", "Write", {
          file_path: join(project, WRITTEN),
          content: "export const limit = 10;\n",
        });
      }
      if (!done.has("toolu_work_edit")) {
        return call("toolu_work_edit", "Edit", {
          file_path: join(project, WRITTEN),
          old_string: "limit = 10",
          new_string: "limit = 20",
        });
      }
      if (!done.has("toolu_work_read")) return call("toolu_work_read", "Read", { file_path: join(project, READ) });
      if (!done.has("toolu_work_commit")) return call("toolu_work_commit", "Bash", { command: COMMIT_COMMAND });
      if (!done.has("toolu_work_fail")) return call("toolu_work_fail", "Bash", { command: FAILING_COMMAND });
      return { text: "WORK-DONE" };
    }
    return { text: "OK" };
  }

  async function claude(prompt: string, resume?: string): Promise<{ run: ClaudeRun; requests: MessagesRequest[] }> {
    const from = fake.requests.length;
    const run = await runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt,
      resume,
      allowedTools: ALLOWED_TOOLS,
      permissionMode: "acceptEdits",
      timeoutMs: RUN_TIMEOUT_MS,
    });
    return { run, requests: fake.requests.slice(from) };
  }

  let setup: ArbeitProject;
  const arbeit = (...args: string[]) => setup.arbeit(...args);
  const withStore = <T>(read: (service: ArbeitService) => Promise<T>) => setup.withStore(read);
  const getTask = (id: string) => setup.getTask(id);

  before(
    async () => {
      sandbox = createSandbox();
      project = sandbox.project;
      setup = await setUpArbeitProject(sandbox, "e2e-project");
      taskId = (await arbeit("call", "arbeit_task_create", JSON.stringify(TASK))).task.id;
      raceTaskId = (await arbeit("call", "arbeit_task_create", JSON.stringify(RACE_TASK))).task.id;
      writeFileSync(join(project, READ), "export const router = [];\n");
      fake = await startFakeAnthropic(script);
    },
    { timeout: 2 * 60_000 },
  );

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  it("setup points the hooks and the MCP server at the project's node_modules/.bin/arbeit, this checkout's launcher", () => {
    const bin = '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/arbeit';
    const mcp = JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8"));
    assert.deepEqual(mcp.mcpServers.arbeit, { command: "sh", args: ["-c", `exec ${bin} mcp`] });
    const { hooks } = JSON.parse(readFileSync(join(project, ".claude", "settings.json"), "utf8"));
    for (const [event, name] of [
      ["SessionStart", "session-start"],
      ["PostToolUse", "post-tool-use"],
      ["PreCompact", "pre-compact"],
    ] as const) {
      const commands = hooks[event].flatMap((group: any) => group.hooks.map((hook: any) => hook.command));
      assert.deepEqual(commands, [`[ ! -x ${bin} ] || ${bin} hook ${name}`], event);
    }
    assert.equal(realpathSync(join(project, "node_modules", ".bin", "arbeit")), join(REPO, "bin", "arbeit.cjs"));
  });

  it("conversation 1: start_work through MCP claims the task for Claude Code's session; Write, Edit and Read are recorded under it", async () => {
    const { run, requests } = await claude(
      "WORK-PROMPT: start the task, write limiter.ts, edit it, read router.ts, commit, cat a missing file.",
    );
    runs.work = run;
    requestsOf.work = requests;
    assertRunOk(run, "work");
    assert.deepEqual(fake.errors, []);
    assert.equal(run.result.result, "WORK-DONE");
    sessionId = run.sessionId!;
    assertHooksClean(run, "work");
    assert.equal(readFileSync(join(project, WRITTEN), "utf8"), "export const limit = 20;\n");

    // The MCP server's session is CLAUDE_CODE_SESSION_ID, the conversation's id.
    const last = requests.at(-1)!;
    const started = envelopeOf(toolResults(last).get("toolu_work_start")!.text);
    assert.equal(started.success, true, JSON.stringify(started));
    assert.equal(started.data.session_id, sessionId);
    // The three file tools each ran the PostToolUse hook.
    const postToolUse = run.events
      .filter((event) => event.subtype === "hook_response" && event.hook_event === "PostToolUse")
      .map((event) => event.hook_name);
    assert.deepEqual(postToolUse, ["PostToolUse:Write", "PostToolUse:Edit", "PostToolUse:Read", "PostToolUse:Bash"]);

    const data = await getTask(taskId);
    const task: Task = data.task;
    assert.equal(task.status, "in_progress");
    // The claim was the conversation's while it ran (start_work's answer above); the run's
    // SessionEnd handed it back.
    assert.equal(started.data.task.claim_session, sessionId);
    assert.equal(started.data.task.owner, "claude-code");
    assert.equal(task.claim_session, null);
    assert.deepEqual(
      data.sessions!.map((link) => [link.session_id, link.agent]),
      [[sessionId, "claude-code"]],
    );
    // Write and Edit of one file are one `write` (a touch is recorded once per task, path,
    // operation and session); the Read is a `read`.
    assert.deepEqual(
      data.files!.map((file) => [file.file_path, file.operations, file.sessions]).sort(),
      [
        [WRITTEN, ["write"], 1],
        [READ, ["read"], 1],
      ].sort(),
    );
    const tracked = await withStore(async (service) => {
      const params = { task_id: taskId, event_types: ["file_tracked"] };
      return (await service.query({ query: "events", params }, ANONYMOUS)).data as any;
    });
    assert.deepEqual(
      tracked.events.map((event: any) => [event.payload.file_path, event.payload.operation, event.session_id]),
      [
        [WRITTEN, "write", sessionId],
        [READ, "read", sessionId],
      ],
    );
  });

  it("conversation 1's other hooks: the prompt logged, the commit and the failed Bash call on the task, a handoff at SessionEnd", async () => {
    assert.ok(sessionId, "conversation 1 ran");
    const logged = await withStore((service) =>
      service.store.read((tx) => tx.listEvents({ after_seq: 0, event_types: ["prompt_submitted"], limit: 10 })),
    );
    // The prompt came before start_work: a prompt of the session, on no task.
    assert.deepEqual(
      logged.map((event) => [event.entity_id, event.task_id, String(event.payload.prompt).slice(0, 12)]),
      [[sessionId, null, "WORK-PROMPT:"]],
    );
    const { data } = await withStore((service) =>
      service.getTask({ task_id: taskId, include: ["commits", "context"] }),
    );
    assert.deepEqual(
      data.commits!.map((commit) => [commit.subject, commit.files, commit.session_id]),
      [[COMMIT_SUBJECT, [WRITTEN], sessionId]],
    );
    const attempts = data.context!.filter((entry) => entry.type === "attempt");
    assert.equal(attempts.length, 1, JSON.stringify(data.context));
    assert.match(attempts[0]!.content, new RegExp(`^Bash failed: ${FAILING_COMMAND}\nOutcome: .*no-such-file`, "s"));
    // `claude -p` ends each run with SessionEnd (reason other): a handoff, and the work stopped, its
    // claim handed back, so that a run never resumed holds nothing.
    const handoffs = data.context!.filter((entry) => entry.metadata?.handoff === true);
    assert.equal(handoffs.length, 1);
    assert.match(handoffs[0]!.content, new RegExp(`^Handoff: session ${sessionId} ended \\(other\\)`));
    assert.match(handoffs[0]!.content, /Files touched:\n- limiter\.ts \(written\)\n- router\.ts \(read\)/);
    assert.equal(data.task.claim_session, null);
  });

  it("--resume: the SessionStart hook briefs the model on the task, with its intent and plan", async () => {
    assert.ok(sessionId, "conversation 1 ran");
    const { run, requests } = await claude("RESUME-PROMPT: where was I?", sessionId);
    runs.resume = run;
    requestsOf.resume = requests;
    assertRunOk(run, "resume");
    assert.equal(run.sessionId, sessionId, "--resume keeps the session id");
    assert.equal(run.result.result, "RESUME-DONE");
    assertHooksClean(run, "resume");

    const [context] = sessionStartContexts(run, "resume");
    assert.ok(context, "SessionStart(resume) answered with additionalContext");
    assert.match(context, /^Arbeit: this session last worked on:/);
    assert.ok(context.includes(`Resume it with arbeit_task_start_work {"task_id": "${taskId}"}`), context);
    for (const part of [taskId, TASK.title, `intent: ${TASK.intent}`, `plan: ${TASK.plan}`, WRITTEN, READ]) {
      assert.ok(context.includes(part), `the briefing has ${JSON.stringify(part)}:\n${context}`);
    }
    // It reached the model: the first request of the resumed conversation carries it.
    const first = requests[0]!.messages.map(messageText);
    assert.ok(
      first.some((text) => text.includes(HOOK_CONTEXT + context)),
      `the resumed conversation's first request carries the briefing:\n${first.join("\n---\n").slice(-3000)}`,
    );
    // Conversation 1 started without a task of its own: its briefing was the note of ready work.
    for (const request of requestsOf.work!) {
      assert.equal(JSON.stringify(request).includes("this session is working on"), false);
    }
  });

  it("/compact: PreCompact's briefing is in the summary instructions; SessionStart(compact) briefs the next request", async () => {
    assert.ok(sessionId, "conversation 1 ran");
    const { run, requests } = await claude("/compact", sessionId);
    runs.compact = run;
    requestsOf.compact = requests;
    assertRunOk(run, "compact");
    assert.equal(run.sessionId, sessionId);
    assertHooksClean(run, "compact");

    // The summary request: its last user message (text blocks only) asks for the summary and ends
    // with the additional instructions, which hold what the PreCompact hook printed.
    const summaryRequests = requests.filter((request) =>
      /detailed summary of the conversation/i.test(lastUserText(request)),
    );
    assert.ok(summaryRequests.length >= 1, "a compaction request");
    for (const request of summaryRequests) {
      const instructions = lastUserText(request);
      const at = instructions.indexOf(
        "Preserve this task briefing in the summary.\nArbeit: this session last worked on:",
      );
      assert.ok(at >= 0, instructions.slice(-2000));
      const briefing = instructions.slice(at);
      for (const part of [taskId, TASK.title, `intent: ${TASK.intent}`, `plan: ${TASK.plan}`]) {
        assert.ok(briefing.includes(part), `the compaction instructions have ${JSON.stringify(part)}`);
      }
    }
    const [compactContext] = sessionStartContexts(run, "compact");
    assert.ok(compactContext, "SessionStart(compact) answered with additionalContext");
    assert.match(compactContext, /^Arbeit: this session last worked on:/);
    for (const part of [taskId, `intent: ${TASK.intent}`, `plan: ${TASK.plan}`]) {
      assert.ok(compactContext.includes(part), `the compact briefing has ${JSON.stringify(part)}`);
    }

    // PostCompact marked the compaction in the task's history.
    const compacted = await withStore((service) =>
      service.store.read((tx) => tx.listEvents({ after_seq: 0, event_types: ["session_compacted"], limit: 10 })),
    );
    assert.deepEqual(
      // The previous run's end stopped the work: the compaction is the session's, on no task.
      compacted.map((event) => [event.entity_id, event.task_id, event.payload.trigger]),
      [[sessionId, null, "manual"]],
    );

    // A -p `/compact` makes no request after compacting: the briefing reaches the next one. A
    // note added now tells the briefing made at compaction (without it) from the one the next
    // run's SessionStart(resume) makes (with it).
    await arbeit("call", "arbeit_context_add", JSON.stringify({ task_id: taskId, type: "note", content: LATE_NOTE }));
    const next = await claude("AFTER-COMPACT-PROMPT: carry on.", sessionId);
    runs.after = next.run;
    requestsOf.after = next.requests;
    assertRunOk(next.run, "after");
    assert.equal(next.run.sessionId, sessionId);
    assert.equal(next.run.result.result, "AFTER-DONE");
    assertHooksClean(next.run, "after");

    const request = next.requests[0]!;
    assert.ok(firstUserText(request).includes(SUMMARY), "the conversation restarts from the summary");
    const messages = request.messages.map(messageText);
    const briefedAt = messages.findIndex((text) => text.includes(HOOK_CONTEXT + compactContext));
    const promptAt = messages.findIndex((text) => text.includes("AFTER-COMPACT-PROMPT"));
    assert.ok(
      briefedAt > 0,
      `the SessionStart(compact) briefing reached the next request:\n${messages.join("\n---\n")}`,
    );
    assert.ok(briefedAt < promptAt, "it was added at compaction, before the next prompt");
    assert.equal(compactContext.includes(LATE_NOTE), false);
    // The resumed run's own briefing, current again, follows the prompt.
    const [resumeContext] = sessionStartContexts(next.run, "resume");
    assert.ok(resumeContext?.includes(LATE_NOTE), resumeContext);
    const resumedAt = messages.findIndex((text) => text.includes(HOOK_CONTEXT + resumeContext));
    assert.ok(resumedAt > promptAt, `the resume briefing reached the model after the prompt (${resumedAt})`);
    assert.deepEqual(fake.errors, []);
  });

  it("two conversations at once: both start work on one task and claim it; exactly one holds it, the other gets ALREADY_CLAIMED", async () => {
    const racing = await Promise.all(
      RACERS.map((tag) => claude(`${tag}: start work on the key rotation task, then claim it.`)),
    );
    const outcomes = racing.map(({ run, requests }, index) => {
      const tag = RACERS[index]!;
      assertRunOk(run, tag);
      assert.equal(run.result.result, `${tag}-DONE`);
      assertHooksClean(run, tag);
      const key = tag.toLowerCase().replace("-", "_");
      // Both runs share the fake API: this conversation's requests are the ones that start with its tag.
      const last = requests.filter((request) => firstUserText(request).includes(tag)).at(-1);
      assert.ok(last, `${tag}: requests`);
      const results = toolResults(last);
      const start = results.get(`toolu_${key}_start`);
      const claim = results.get(`toolu_${key}_claim`);
      assert.ok(start && claim, `${tag}: both tool results came back`);
      return { tag, session: run.sessionId!, start, claim };
    });
    const sessions = outcomes.map((outcome) => outcome.session);
    assert.notEqual(sessions[0], sessions[1], "two conversations, two sessions");
    assert.ok(!sessions.includes(sessionId), "neither is conversation 1");

    const winners = outcomes.filter((outcome) => !outcome.start.isError);
    assert.equal(winners.length, 1, `exactly one start_work succeeds: ${JSON.stringify(outcomes, null, 1)}`);
    const winner = winners[0]!;
    const loser = outcomes.find((outcome) => outcome !== winner)!;

    const started = envelopeOf(winner.start.text);
    assert.equal(started.success, true);
    assert.equal(started.data.session_id, winner.session);
    assert.equal(winner.claim.isError, false, winner.claim.text);
    const claimed = envelopeOf(winner.claim.text);
    assert.equal(claimed.success, true);
    assert.equal(claimed.data.claimed, true);
    assert.equal(claimed.data.renewed, true, "start_work had claimed it already");

    for (const [name, result] of [
      ["start_work", loser.start],
      ["claim", loser.claim],
    ] as const) {
      assert.equal(result.isError, true, `${loser.tag} ${name}: ${result.text}`);
      assert.ok(result.text.includes("ALREADY_CLAIMED"), `${loser.tag} ${name}: ${result.text}`);
      const envelope = envelopeOf(result.text);
      assert.equal(envelope.success, false);
      assert.equal(envelope.error.code, "ALREADY_CLAIMED");
      assert.equal(envelope.error.details.owner, "claude-code");
    }

    const data = await getTask(raceTaskId);
    // The winner held it while both ran; its run's end handed the claim back.
    assert.equal(claimed.data.task.claim_session, winner.session);
    assert.equal(data.task.claim_session, null);
    assert.equal(data.task.status, "in_progress");
    assert.deepEqual(
      data.sessions!.map((link) => link.session_id),
      [winner.session],
      "only the holder works on it",
    );
    // Conversation 1's runs ended: its task is claimed by nobody, the racers included.
    assert.equal((await getTask(taskId)).task.claim_session, null);
    assert.deepEqual(fake.errors, []);
  });

  it("a person answers the conversation's question between two of its tool calls: the next request carries the answer, and no later step repeats it", async () => {
    askTaskId = (await arbeit("call", "arbeit_task_create", JSON.stringify(ASK_TASK))).task.id;
    const { run, requests } = await claude("ASK-PROMPT: start the store task, ask which store to use, read router.ts.");
    assertRunOk(run, "ask");
    assert.equal(run.result.result, "ASK-DONE");
    assertHooksClean(run, "ask");
    assert.deepEqual(fake.errors, []);
    assert.ok(answering, "the person answered");
    const askSession = run.sessionId!;
    assert.notEqual(askSession, sessionId);

    // The question is the conversation's, the answer the person's, superseding it.
    const added = await withStore((service) =>
      service.store.read((tx) =>
        tx.listEvents({ after_seq: 0, task_id: askTaskId, event_types: ["context_added"], limit: 20 }),
      ),
    );
    const asked = added.filter((event) => ["blocker", "user_input"].includes(String(event.payload.type)));
    assert.deepEqual(
      asked.map((event) => [event.payload.type, event.payload.content, event.session_id, event.agent]),
      [
        ["blocker", QUESTION, askSession, "claude-code"],
        ["user_input", ANSWER, "agent:human:alice", "human:alice"],
      ],
    );
    assert.equal(asked[1]!.payload.supersedes, asked[0]!.entity_id);

    const news = `human:alice answered the question on ${askTaskId} ("${QUESTION}"): ${ANSWER}`;
    const copies = (request: MessagesRequest) =>
      [systemText(request), ...request.messages.map(messageText)].join("\n").split(news).length - 1;
    // The request the person answered during came before the news; every request after the Read
    // (the next tool call) carries it once: PostToolUse:Read told it, and no other hook did.
    const during = requests.filter(
      (r) => toolResults(r).has("toolu_ask_blocker") && !toolResults(r).has("toolu_ask_read"),
    );
    assert.equal(during.length, 1);
    assert.equal(copies(during[0]!), 0);
    const afterRead = requests.filter((r) => toolResults(r).has("toolu_ask_read"));
    assert.ok(afterRead.length >= 1, "a request after the Read");
    for (const request of afterRead) {
      assert.equal(copies(request), 1, request.messages.map(messageText).join("\n---\n").slice(-3000));
    }
    const told = run.events.filter((event) => event.subtype === "hook_response" && event.output?.includes(ANSWER));
    assert.deepEqual(
      told.map((event) => event.hook_name),
      ["PostToolUse:Read"],
    );
    assert.equal(
      JSON.parse(told[0].output).hookSpecificOutput.additionalContext,
      `Arbeit: news since this session last looked:\n- ${news}`,
    );

    // The next prompt (the same conversation, --resume): no hook tells it again.
    const next = await claude("ASK-AGAIN-PROMPT: anything else?", askSession);
    assertRunOk(next.run, "ask again");
    assert.equal(next.run.sessionId, askSession);
    assert.equal(next.run.result.result, "ASK-AGAIN-DONE");
    assertHooksClean(next.run, "ask again");
    const hooks = next.run.events.filter((event) => event.subtype === "hook_response");
    assert.ok(
      hooks.some((event) => event.hook_name === "UserPromptSubmit"),
      hooks.map((e) => e.hook_name).join(),
    );
    // SessionStart(resume) briefs it on the task, whose context now holds the answer; that is the
    // task as it stands, not news told again.
    for (const event of hooks) {
      assert.equal(event.output?.includes("human:alice answered"), false, `${event.hook_name}: ${event.output}`);
    }
    assert.ok(next.requests.length >= 1);
    for (const request of next.requests) assert.equal(copies(request), 1, "only the copy the history keeps");
    assert.deepEqual(fake.errors, []);
  });
});
