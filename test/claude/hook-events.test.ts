import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ArbeitEvent, EventType } from "../../src/domain/types.js";
import { openProject } from "../../src/service/project.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { hookPayload, runHook } from "./hook-input.js";

/**
 * The hooks beyond file tracking, fed payloads shaped as the real Claude Code sends them
 * (docs/claude-code-findings.md) through the built CLI: prompts, commits, failed calls,
 * sub-agents, compaction and the end of a session.
 */

const SESSION = "5d1e7c2a-claude-session";
/** Another session: a person at the terminal (agent "alice"). */
const PERSON = "person-at-terminal";

const payload = (dir: string, event: string, fields: Record<string, unknown> = {}, session = SESSION) =>
  hookPayload(dir, session, event, fields);

const hook = runHook;

/** A hook that must succeed silently. */
async function quiet(name: string, input: string, cwd: string): Promise<void> {
  const result = await hook(name, input, cwd);
  assert.deepEqual([result.code, result.stdout, result.stderr], [0, "", ""], name);
}

function contextOf(result: CliResult, event: string): string {
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, "");
  assert.equal(result.json?.hookSpecificOutput?.hookEventName, event, result.stdout);
  return result.json.hookSpecificOutput.additionalContext;
}

async function call(dir: string, session: string, tool: string, args: object): Promise<any> {
  const agent = session === PERSON ? "alice" : "claude-code";
  const result = await runCli(["--session", session, "--agent", agent, "call", tool, JSON.stringify(args)], {
    cwd: dir,
  });
  assert.equal(result.code, 0, `${tool}: ${result.stdout}${result.stderr}`);
  return result.json.data;
}

async function events(dir: string, types: EventType[]): Promise<ArbeitEvent[]> {
  const service = await openProject({ cwd: dir });
  try {
    return await service.store.read((tx) => tx.listEvents({ after_seq: 0, event_types: types, limit: 1000 }));
  } finally {
    await service.close();
  }
}

const git = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=t@example.com", ...args], {
    cwd: dir,
    encoding: "utf8",
  });

describe("Claude Code hooks: prompts, commits, failures, sub-agents, compaction, session end", () => {
  let dir: string;
  let cleanup: () => void;
  let taskId: string;
  let blockerId: string;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-claude-events-"));
    git(dir, "init", "-q", "-b", "main");
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "app.ts"), "export {};\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "Start");
    await call(dir, SESSION, "arbeit_init", {});
    blockerId = (await call(dir, PERSON, "arbeit_task_create", { title: "Pick a cookie library" })).task.id;
    taskId = (await call(dir, PERSON, "arbeit_task_create", { title: "Fix the login bug" })).task.id;
    await call(dir, PERSON, "arbeit_relationship", {
      action: "add",
      from_task_id: blockerId,
      to_task_id: taskId,
      type: "blocks",
    });
    await call(dir, PERSON, "arbeit_memory", {
      action: "set",
      scope: "project",
      key: "test-command",
      value: "npm test",
    });
  });

  after(() => cleanup());

  it("session-start resumes the session: the work waiting, and the project's memory", async () => {
    const text = contextOf(
      await hook("session-start", payload(dir, "SessionStart", { source: "startup" }), dir),
      "SessionStart",
    );
    assert.match(text, /Arbeit task memory is set up/);
    assert.match(text, /Memory:\n- test-command \(project\): "npm test"/);
  });

  it("user-prompt-submit logs the prompt, on no task while the session has none, and prints nothing without news", async () => {
    await quiet("user-prompt-submit", payload(dir, "UserPromptSubmit", { prompt: "Look around first" }), dir);
    const [logged] = await events(dir, ["prompt_submitted"]);
    assert.equal(logged?.task_id, null);
    assert.equal(logged?.entity_type, "session");
    assert.equal(logged?.entity_id, SESSION);
    assert.equal(logged?.payload.prompt, "Look around first");
  });

  it("user-prompt-submit logs a prompt on the active task, cut to 2,000 characters", async () => {
    await call(dir, SESSION, "arbeit_task_start_work", { task_id: taskId });
    await quiet("user-prompt-submit", payload(dir, "UserPromptSubmit", { prompt: "x".repeat(5000) }), dir);
    const logged = (await events(dir, ["prompt_submitted"])).at(-1)!;
    assert.equal(logged.task_id, taskId);
    assert.equal((logged.payload.prompt as string).length, 2000);
    assert.equal(logged.payload.chars, 5000);
  });

  it("user-prompt-submit tells the session, once, of a person's note on its task and of a blocker finished", async () => {
    await call(dir, PERSON, "arbeit_context_add", { task_id: taskId, type: "user_input", content: "Use SameSite=Lax" });
    await call(dir, PERSON, "arbeit_task_update", { task_id: blockerId, status: "completed" });
    const text = contextOf(
      await hook("user-prompt-submit", payload(dir, "UserPromptSubmit", { prompt: "Go on" }), dir),
      "UserPromptSubmit",
    );
    assert.equal(
      text,
      [
        "Arbeit: news since this session last looked:",
        `- alice added a user_input to ${taskId}: Use SameSite=Lax`,
        `- ${blockerId}, which blocked ${taskId}, is completed.`,
      ].join("\n"),
    );
    await quiet("user-prompt-submit", payload(dir, "UserPromptSubmit", { prompt: "And now?" }), dir);
  });

  it("user-prompt-submit tells the session that a person broke its claim", async () => {
    await call(dir, PERSON, "arbeit_task_claim", { action: "release", task_id: taskId, force: true });
    const text = contextOf(
      await hook("user-prompt-submit", payload(dir, "UserPromptSubmit", { prompt: "Go on" }), dir),
      "UserPromptSubmit",
    );
    assert.equal(
      text,
      `Arbeit: news since this session last looked:\n- alice broke this session's claim on ${taskId}.`,
    );
    await call(dir, SESSION, "arbeit_task_claim", { task_id: taskId });
  });

  it("post-tool-use records a successful git commit made through Bash on the active task, with its files", async () => {
    writeFileSync(join(dir, "src", "app.ts"), "export const cookie = 'lax';\n");
    writeFileSync(join(dir, "src", "cookie.ts"), "export {};\n");
    git(dir, "add", ".");
    const stdout = git(dir, "commit", "-m", "Set the cookie to SameSite=Lax");
    const sha = git(dir, "rev-parse", "HEAD").trim();
    const bash = (command: string, out: string) =>
      payload(dir, "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command, description: "Commit" },
        tool_response: { stdout: out, stderr: "", interrupted: false, isImage: false },
        tool_use_id: "toolu_commit",
      });
    await quiet("post-tool-use", bash(`git add -A && git commit -m "Set the cookie to SameSite=Lax"`, stdout), dir);
    await quiet("post-tool-use", bash(`git add -A && git commit -m "Set the cookie to SameSite=Lax"`, stdout), dir);
    await quiet(
      "post-tool-use",
      bash("git commit -m again", "On branch main\nnothing to commit, working tree clean\n"),
      dir,
    );
    await quiet("post-tool-use", bash("git log -1", stdout), dir);
    const { commits } = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["commits"] });
    assert.equal(commits.length, 1);
    assert.deepEqual(
      { ...commits[0], at: undefined },
      {
        sha,
        subject: "Set the cookie to SameSite=Lax",
        files: ["src/app.ts", "src/cookie.ts"],
        session_id: SESSION,
        at: undefined,
      },
    );
  });

  it("post-tool-use records a quiet commit (`git commit -q`, no output) as the HEAD git just made", async () => {
    writeFileSync(join(dir, "src", "cookie.ts"), "export const sameSite = 'Lax';\n");
    git(dir, "commit", "-qam", "Name the SameSite value");
    const bash = {
      tool_name: "Bash",
      tool_input: { command: `git commit -qam "Name the SameSite value"` },
      tool_response: { stdout: "", stderr: "", interrupted: false, isImage: false },
      duration_ms: 40,
    };
    await quiet("post-tool-use", payload(dir, "PostToolUse", bash), dir);
    const { commits } = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["commits"] });
    assert.deepEqual(
      commits.map((commit: any) => [commit.subject, commit.files]),
      [
        ["Set the cookie to SameSite=Lax", ["src/app.ts", "src/cookie.ts"]],
        ["Name the SameSite value", ["src/cookie.ts"]],
      ],
    );
  });

  it("post-tool-use records no commit the Bash call did not make: echoed, quoted, a here-document, a dry run, a failed commit", async () => {
    // Someone else's commit, made just before each call: HEAD is new, but not the session's.
    writeFileSync(join(dir, "src", "other.ts"), "export const other = 1;\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "A commit by someone else");
    writeFileSync(join(dir, "src", "other.ts"), "export const other = 2;\n");
    const bash = (command: string, stdout: string, stderr = "") =>
      payload(dir, "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command },
        tool_response: { stdout, stderr, interrupted: false, isImage: false },
        duration_ms: 30,
      });
    const dryRun = git(dir, "commit", "--dry-run", "-am", "x");
    await quiet("post-tool-use", bash("echo 'git commit -m x'", "git commit -m x\n"), dir);
    await quiet("post-tool-use", bash("cat > notes.md <<'EOF'\ngit commit -am x\nEOF", ""), dir);
    await quiet("post-tool-use", bash(`grep -rn "git commit" src || true`, ""), dir);
    await quiet("post-tool-use", bash("git commit --dry-run -am x", dryRun), dir);
    await quiet(
      "post-tool-use",
      bash(
        "git commit -m x nope; echo done",
        "done\n",
        "error: pathspec 'nope' did not match any file(s) known to git\n",
      ),
      dir,
    );
    const { commits } = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["commits"] });
    assert.deepEqual(
      commits.map((commit: any) => commit.subject),
      ["Set the cookie to SameSite=Lax", "Name the SameSite value"],
    );
  });

  it("post-tool-use-failure records a failed call as an attempt on the active task, at most one per tool a minute", async () => {
    const failure = (tool: string, input: object, error: string, extra: object = {}) =>
      payload(dir, "PostToolUseFailure", {
        tool_name: tool,
        tool_input: input,
        error,
        tool_use_id: "toolu_f",
        ...extra,
      });
    await quiet("post-tool-use-failure", failure("Bash", { command: "npm test" }, "Exit code 1\n3 failing"), dir);
    await quiet("post-tool-use-failure", failure("Bash", { command: "npm test" }, "Exit code 1\n2 failing"), dir);
    await quiet("post-tool-use-failure", failure("Read", { file_path: "/nope.ts" }, "File does not exist."), dir);
    await quiet(
      "post-tool-use-failure",
      failure("Edit", { file_path: "/x.ts" }, "Interrupted", { is_interrupt: true }),
      dir,
    );
    await quiet("post-tool-use-failure", failure("mcp__arbeit__arbeit_task_get", {}, "TASK_NOT_FOUND"), dir);
    const { context } = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["context"] });
    assert.deepEqual(
      context.filter((entry: any) => entry.type === "attempt").map((entry: any) => entry.content),
      [
        "Bash failed: npm test\nOutcome: Exit code 1\n3 failing",
        "Read failed: /nope.ts\nOutcome: File does not exist.",
      ],
    );
  });

  it("subagent-start records the sub-agent and briefs it on its parent's task; subagent-stop ends its own work with a handoff", async () => {
    const agent = { agent_id: "a0123456789abcdef", agent_type: "general-purpose" };
    const brief = contextOf(await hook("subagent-start", payload(dir, "SubagentStart", agent), dir), "SubagentStart");
    assert.match(brief, new RegExp(`^Arbeit: the session that started this one is working on:\nTask ${taskId}`));
    const subTask = (await call(dir, PERSON, "arbeit_task_create", { title: "Write the cookie test" })).task.id;
    await call(dir, `${SESSION}/${agent.agent_id}`, "arbeit_task_start_work", { task_id: subTask });
    await quiet(
      "subagent-stop",
      payload(dir, "SubagentStop", { ...agent, stop_hook_active: false, last_assistant_message: "Done" }),
      dir,
    );
    // The agent that writes a compaction's summary: no SubagentStart, an empty agent_type.
    await quiet("subagent-stop", payload(dir, "SubagentStop", { agent_id: "a1111111111111111", agent_type: "" }), dir);
    const recorded = await events(dir, ["subagent_started", "subagent_stopped"]);
    assert.deepEqual(
      recorded.map((event) => [event.event_type, event.entity_id, event.task_id, event.payload.stopped_work_on]),
      [
        ["subagent_started", `${SESSION}/${agent.agent_id}`, taskId, undefined],
        ["subagent_stopped", `${SESSION}/${agent.agent_id}`, taskId, subTask],
      ],
    );
    const sub = await call(dir, PERSON, "arbeit_task_get", { task_id: subTask, include: ["context"] });
    assert.equal(sub.task.claim_session, null);
    assert.match(sub.context[0].content, /^Handoff: session .*\/a0123456789abcdef ended \(sub-agent stopped\)/);
  });

  it("post-compact records the compaction on the active task", async () => {
    await quiet("post-compact", payload(dir, "PostCompact", { trigger: "manual", compact_summary: "Summary." }), dir);
    const [compacted] = await events(dir, ["session_compacted"]);
    assert.deepEqual([compacted?.task_id, compacted?.payload], [taskId, { trigger: "manual", summary_chars: 8 }]);
  });

  it("session-end after a `claude -p` run (reason other) leaves a handoff note, stops the work and hands the claim back", async () => {
    const items = (
      await call(dir, SESSION, "arbeit_progress_add", {
        task_id: taskId,
        items: ["Find the cause", "Fix it", "Add a test"],
      })
    ).items;
    await call(dir, SESSION, "arbeit_progress_complete", { item_ids: [items[0].id] });
    await call(dir, SESSION, "arbeit_context_add", {
      task_id: taskId,
      type: "decision",
      content: "Keep the session cookie",
    });
    const write = { tool_name: "Write", tool_input: { file_path: join(dir, "src", "app.ts") }, tool_response: {} };
    await quiet("post-tool-use", payload(dir, "PostToolUse", write), dir);
    await quiet("session-end", payload(dir, "SessionEnd", { reason: "other" }), dir);
    const { task, context } = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["context"] });
    // A run that is never resumed holds nothing: another session may take the task at once.
    assert.equal(task.claim_session, null);
    const note = context.at(-1);
    assert.equal(note.type, "note");
    assert.deepEqual(note.metadata, { handoff: true, session: SESSION, reason: "other" });
    assert.match(note.content, new RegExp(`^Handoff: session ${SESSION} ended \\(other\\)`));
    assert.match(note.content, /\nDone in this session:\n- Find the cause\nRemaining:\n- Fix it\n- Add a test\n/);
    assert.match(
      note.content,
      /\nLatest decisions:\n- Keep the session cookie\nFiles touched:\n- src\/app.ts \(written\)$/,
    );
  });

  it("after a `claude -p` run: --resume is told how to start the work again, and /compact keeps its briefing", async () => {
    const resumed = contextOf(
      await hook("session-start", payload(dir, "SessionStart", { source: "resume" }), dir),
      "SessionStart",
    );
    assert.match(resumed, new RegExp(`^Arbeit: this session last worked on:\nTask ${taskId}`));
    assert.ok(resumed.includes(`Resume it with arbeit_task_start_work {"task_id": "${taskId}"}`), resumed);
    const compacting = await hook("pre-compact", payload(dir, "PreCompact", { trigger: "manual" }), dir);
    assert.match(
      compacting.stdout,
      /^Preserve this task briefing in the summary\.\nArbeit: this session last worked on:/,
    );
    await call(dir, SESSION, "arbeit_task_start_work", { task_id: taskId });
  });

  it("session-end on exit supersedes the session's earlier handoff and stops the work, handing the claim back", async () => {
    await quiet("session-end", payload(dir, "SessionEnd", { reason: "prompt_input_exit" }), dir);
    const { task, context } = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["context"] });
    assert.equal(task.claim_session, null);
    const handoffs = context.filter((entry: any) => entry.metadata?.handoff);
    assert.equal(handoffs.length, 1, "one live handoff per session");
    assert.match(handoffs[0].content, /ended \(prompt_input_exit\)/);
    // Ended: a second SessionEnd finds no work and writes nothing.
    await quiet("session-end", payload(dir, "SessionEnd", { reason: "other" }), dir);
    const after = await call(dir, PERSON, "arbeit_task_get", { task_id: taskId, include: ["context"] });
    assert.equal(after.context.length, context.length);
  });

  it("session-start after news: the task it last worked on, and what others changed since it last looked", async () => {
    await call(dir, PERSON, "arbeit_context_add", {
      task_id: taskId,
      type: "note",
      content: "The QA team found another case",
    });
    const text = contextOf(
      await hook("session-start", payload(dir, "SessionStart", { source: "resume" }), dir),
      "SessionStart",
    );
    assert.match(text, new RegExp(`^Arbeit: this session last worked on:\nTask ${taskId}`));
    assert.match(
      text,
      /Changed since this session last looked:\n- alice added a note to .*: The QA team found another case/,
    );
  });

  it("every row the hooks wrote passes arbeit doctor (the session entity, the new event types)", async () => {
    const result = await runCli(["doctor", "--json"], { cwd: dir });
    assert.equal(result.code, 0, result.stdout);
    assert.equal(result.json.ok, true, result.stdout);
  });
});
