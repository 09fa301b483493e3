import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { requirement } from "../helpers/requirements.js";
import { type ArbeitProject, setUpArbeitProject } from "./arbeit-project.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import {
  type FakeAnthropic,
  lastUserText,
  type MessagesRequest,
  startFakeAnthropic,
  type Turn,
  textOf,
  toolResults,
} from "./fake-anthropic.js";

/**
 * The retrospective a Claude Code session is offered, with the real CLI against a scripted API:
 * a run records a decision and a failed attempt through the `arbeit` MCP server; compacting the
 * conversation (`/compact`) offers, in SessionStart(compact)'s context, what the session recorded,
 * quoted, with the arbeit_memory call that keeps a lesson; the next run's request carries the
 * offer, and the model keeps a lesson in its own words. Arbeit itself stores none, and offers each
 * trigger once.
 */

const RUN_TIMEOUT_MS = 60_000;
const ALLOWED_TOOLS = ["mcp__arbeit__*"];
const TASK = { title: "Import the legacy CSV exports", intent: "Old customers' data must come across" };
const DECISION = "DECISION-9R: stream the file row by row";
const ATTEMPT = "ATTEMPT-9R: a regex split failed on quoted commas";
const LESSON = "LESSON-9R: parse CSV with a real parser, never a regex";
const SUMMARY = "SUMMARY-9R: the agent started the import and recorded what it decided.";
const HOOK_CONTEXT = "SessionStart hook additional context: ";

const cannotRun = requirement("the real-Claude-Code retrospective test", claudeMissing());

function sessionStartContexts(run: ClaudeRun, source: string): string[] {
  return run.events
    .filter((event) => event.subtype === "hook_response" && event.hook_name === `SessionStart:${source}`)
    .map((event) => JSON.parse(event.output).hookSpecificOutput.additionalContext as string);
}

function assertRunOk(run: ClaudeRun, label: string): void {
  assert.equal(run.timedOut, false, `${label}: claude did not finish\n${run.stderr}`);
  assert.equal(run.code, 0, `${label}: claude exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`);
  assert.equal(run.result?.is_error, false, `${label}: ${JSON.stringify(run.result)}`);
  for (const response of run.events.filter((event) => event.subtype === "hook_response")) {
    assert.equal(response.exit_code, 0, `${label}: ${response.hook_name}\n${response.stderr}`);
    assert.equal(response.stderr, "", `${label}: ${response.hook_name} stderr`);
  }
}

describe("Claude Code, real binary: a session's retrospective is offered at compaction and kept by the agent", {
  skip: cannotRun,
  timeout: 6 * RUN_TIMEOUT_MS,
}, () => {
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let setup: ArbeitProject;
  let taskId: string;
  let sessionId: string;
  const withStore = <T>(read: (service: ArbeitService) => Promise<T>) => setup.withStore(read);

  function script(request: MessagesRequest): Turn {
    const done = toolResults(request);
    const call = (id: string, name: string, input: Record<string, unknown>): Turn => ({
      tools: [{ id, name: `mcp__arbeit__${name}`, input }],
    });
    if (/detailed summary of the conversation/i.test(lastUserText(request))) return { text: SUMMARY };
    const conversation = request.messages.map((message) => textOf(message.content)).join("\n");
    if (conversation.includes("WORK-PROMPT")) {
      if (!done.has("toolu_start")) return call("toolu_start", "arbeit_task_start_work", { task_id: taskId });
      if (!done.has("toolu_decide"))
        return call("toolu_decide", "arbeit_context_add", { task_id: taskId, type: "decision", content: DECISION });
      if (!done.has("toolu_attempt"))
        return call("toolu_attempt", "arbeit_context_add", { task_id: taskId, type: "attempt", content: ATTEMPT });
      return { text: "WORK-DONE" };
    }
    // Offered a retrospective, the model keeps the lesson it judges worth keeping, in its words.
    if (conversation.includes("AFTER-PROMPT")) {
      if (conversation.includes('arbeit_memory {"action": "set"') && !done.has("toolu_keep"))
        return call("toolu_keep", "arbeit_memory", { action: "set", key: "csv-parsing", value: LESSON });
      return { text: "AFTER-DONE" };
    }
    return { text: "OK" };
  }

  async function claude(prompt: string, resume?: string) {
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

  const offers = () =>
    withStore((service) =>
      service.store.read((tx) => tx.listEvents({ after_seq: 0, event_types: ["retrospective_offered"], limit: 10 })),
    );
  const memory = () =>
    withStore(
      async (service) =>
        (await service.memory({ action: "list" }, { session: null, agent: null })).data as {
          entries: Array<{ key: string; value: unknown }>;
        },
    );

  before(
    async () => {
      sandbox = createSandbox();
      setup = await setUpArbeitProject(sandbox, "retrospective-project");
      taskId = (await setup.arbeit("call", "arbeit_task_create", JSON.stringify(TASK))).task.id;
      fake = await startFakeAnthropic(script);
    },
    { timeout: 2 * 60_000 },
  );

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  it("a run records a decision and an attempt: nothing is offered at its start, and no memory is written", async () => {
    const { run } = await claude("WORK-PROMPT: import the exports.");
    assertRunOk(run, "work");
    assert.equal(run.result.result, "WORK-DONE");
    sessionId = run.sessionId!;
    const [start] = sessionStartContexts(run, "startup");
    assert.ok(start, "SessionStart(startup) briefed the run");
    assert.equal(start.includes("arbeit_memory"), false, "a new session has nothing to look back on");
    assert.deepEqual(await offers(), []);
  });

  it("/compact: SessionStart(compact) offers the quoted retrospective with the arbeit_memory call; the next request carries it and the model keeps a lesson", async () => {
    assert.ok(sessionId, "the work run ran");
    const { run } = await claude("/compact", sessionId);
    assertRunOk(run, "compact");
    const [compact] = sessionStartContexts(run, "compact");
    assert.ok(compact, "SessionStart(compact) answered");
    const at = compact.indexOf("Arbeit: the conversation was compacted.");
    assert.ok(at > 0, `the offer follows the briefing:\n${compact}`);
    const offer = compact.slice(at);
    assert.ok(offer.includes(`- decided (${taskId}): ${JSON.stringify(DECISION)}`), offer);
    assert.ok(offer.includes(`- tried (${taskId}): ${JSON.stringify(ATTEMPT)}`), offer);
    assert.match(offer, /arbeit_memory \{"action": "set", "key": "<topic>", "value": "<lesson>"\}/);
    assert.deepEqual((await memory()).entries, [], "Arbeit offered; it stored nothing");

    const next = await claude("AFTER-PROMPT: carry on.", sessionId);
    assertRunOk(next.run, "after");
    assert.equal(next.run.result.result, "AFTER-DONE");
    const first = next.requests[0]!.messages.map((message) => textOf(message.content));
    assert.ok(
      first.some((text) => text.includes(HOOK_CONTEXT) && text.includes(offer)),
      "the offer reached the model",
    );
    for (const source of ["resume", "compact"]) {
      for (const context of sessionStartContexts(next.run, source))
        assert.equal(context.includes("Arbeit: the conversation was compacted."), false, "offered once");
    }
    const kept = (await memory()).entries;
    assert.deepEqual(
      kept.map((entry) => [entry.key, entry.value]),
      [["csv-parsing", LESSON]],
    );
    // One offer per trigger: the /compact run's resume offered the end of the first run, its compaction the rest.
    const offered = await offers();
    assert.deepEqual(offered.map((event) => [event.session_id, event.payload.trigger]).sort(), [
      [sessionId, "compaction"],
      [sessionId, "session_end"],
    ]);
    assert.deepEqual(fake.errors, []);
  });
});
