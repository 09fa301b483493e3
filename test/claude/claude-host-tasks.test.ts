import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { requirement } from "../helpers/requirements.js";
import { type ArbeitProject, setUpArbeitProject } from "./arbeit-project.js";
import {
  type ClaudeRun,
  type ClaudeSandbox,
  claudeMissing,
  createSandbox,
  runClaude,
  runClaudeApproving,
} from "./claude-harness.js";
import { type FakeAnthropic, type Script, startFakeAnthropic, toolResults } from "./fake-anthropic.js";

/**
 * The real Claude Code with `arbeit setup claude`'s hooks: the agent's own task list (TaskCreate,
 * TaskUpdate; TodoWrite where the task tools are off) is mirrored as progress of the task the
 * session works on, and a plan the person approves (ExitPlanMode, approved through the Agent
 * SDK's permission protocol) becomes work. The scripted model picks each step by the tool results
 * it has seen.
 */

const cannotRun = requirement("the real-Claude-Code run of its task list and plans", claudeMissing());
const START = "mcp__arbeit__arbeit_task_start_work";

/** A script that makes `steps` in order, one turn each, then says `done`. */
function stepsScript(steps: Array<{ id: string; name: string; input: Record<string, unknown> }>, done: string): Script {
  return (request) => {
    if (!request.tools?.length) return { text: "title" };
    const seen = toolResults(request);
    const next = steps.find((step) => !seen.has(step.id));
    return next ? { tools: [next] } : { text: done };
  };
}

describe("Claude Code, real binary: its task list and approved plans become Arbeit work", {
  skip: cannotRun,
  timeout: 600_000,
}, () => {
  let sandbox: ClaudeSandbox;
  let project: ArbeitProject;
  let fake: FakeAnthropic | undefined;
  let script: Script = () => ({ text: "idle" });

  before(async () => {
    sandbox = createSandbox();
    project = await setUpArbeitProject(sandbox, "host-tasks", { install: false });
    fake = await startFakeAnthropic((request) => script(request));
  });
  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  const steps = async (taskId: string) =>
    project.withStore(async (service) => {
      const { data } = await service.getTask({ task_id: taskId, include: ["progress"] });
      return (data.progress ?? []).map((item) => `[${item.completed ? "x" : " "}] ${item.content}`);
    });
  const ok = (run: ClaudeRun) => {
    assert.equal(run.code, 0, `${run.stderr}\n${run.stdout.slice(-3000)}`);
    assert.equal(run.result?.is_error, false, JSON.stringify(run.result));
  };
  const hookErrors = (run: ClaudeRun) =>
    run.events.filter((event) => event.type === "system" && /hook/.test(event.subtype) && event.exit_code);

  it("TaskCreate, TaskUpdate and TaskCompleted mirror the task list by id: a renamed task keeps its item, a repeat adds nothing", async () => {
    const task = (await project.arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Parser" }))).task;
    script = stepsScript(
      [
        { id: "start", name: START, input: { task_id: task.id } },
        { id: "c1", name: "TaskCreate", input: { subject: "Write the parser", description: "by hand" } },
        { id: "c2", name: "TaskCreate", input: { subject: "Test the parser", description: "edge cases" } },
        { id: "u1", name: "TaskUpdate", input: { taskId: "1", status: "completed" } },
        {
          id: "u2",
          name: "TaskUpdate",
          input: { taskId: "2", subject: "Test the parser well", status: "in_progress" },
        },
        { id: "u3", name: "TaskUpdate", input: { taskId: "1", status: "completed" } },
        { id: "c3", name: "TaskCreate", input: { subject: "Write the parser", description: "a second list entry" } },
      ],
      "TASKS-DONE",
    );
    const run = await runClaude({
      sandbox,
      baseUrl: fake!.baseUrl,
      prompt: "Plan the parser with your task list.",
      allowedTools: ["mcp__arbeit", "TaskCreate", "TaskUpdate"],
    });
    ok(run);
    assert.equal(run.result?.result, "TASKS-DONE");
    assert.deepEqual(hookErrors(run), []);
    // TaskCreated and TaskCompleted fire headless, and Arbeit's hooks answer them.
    const fired = run.events.filter((event) => event.subtype === "hook_response" && event.exit_code === 0);
    for (const event of ["TaskCreated", "TaskCompleted", "PostToolUse"])
      assert.ok(
        fired.some((hook) => hook.hook_event === event),
        event,
      );
    // Task 3 has the text of task 1: a step the task already has, so it adds nothing either.
    assert.deepEqual(await steps(task.id), ["[x] Write the parser", "[ ] Test the parser"]);
  });

  it("TodoWrite (the task tools turned off) mirrors its list by text, completing what it completes", async () => {
    const task = (await project.arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Lexer" }))).task;
    const todos = (first: string) => [
      { content: "Read the grammar", status: first, activeForm: "Reading the grammar" },
      { content: "Write the lexer", status: "pending", activeForm: "Writing the lexer" },
    ];
    script = stepsScript(
      [
        { id: "start", name: START, input: { task_id: task.id } },
        { id: "t1", name: "TodoWrite", input: { todos: todos("in_progress") } },
        { id: "t2", name: "TodoWrite", input: { todos: todos("completed") } },
      ],
      "TODOS-DONE",
    );
    const run = await runClaude({
      sandbox,
      baseUrl: fake!.baseUrl,
      prompt: "Plan the lexer with your todo list.",
      allowedTools: ["mcp__arbeit", "TodoWrite"],
      env: { CLAUDE_CODE_ENABLE_TASKS: "0" },
    });
    ok(run);
    assert.equal(run.result?.result, "TODOS-DONE");
    assert.deepEqual(await steps(task.id), ["[x] Read the grammar", "[ ] Write the lexer"]);
  });

  it("an approved plan with no active task becomes a task the session works on; numbered headings become subtasks", async () => {
    const plan = [
      "# Plan: Export to CSV",
      "",
      "Context: people want their data out.",
      "",
      "1. Add the `export` command",
      "2. Document it",
      "- src/cli/export.ts (a file, not a step)",
      "",
      "## 1. Writer",
      "- Quote fields",
      "- [x] Pick the line ending",
      "",
      "## Step 2: Tests",
      "1. Round-trip a file",
    ].join("\n");
    let told = "";
    script = (request) => {
      if (!request.tools?.length) return { text: "title" };
      const seen = toolResults(request);
      if (!seen.has("plan")) return { tools: [{ id: "plan", name: "ExitPlanMode", input: { plan } }] };
      told = JSON.stringify(request.messages);
      return { text: "PLAN-DONE" };
    };
    const run = await runClaudeApproving({ sandbox, baseUrl: fake!.baseUrl, prompt: "Plan the CSV export." });
    ok(run);
    assert.equal(run.result?.result, "PLAN-DONE");
    const tasks = await project.withStore(
      async (service) => (await service.store.read((tx) => tx.listTasks({ limit: 1000, offset: 0 }))) as any[],
    );
    const created = tasks.find((task: any) => task.title === "Export to CSV");
    assert.ok(created, JSON.stringify(tasks.map((task: any) => task.title)));
    assert.equal(created.plan, plan);
    assert.deepEqual(await steps(created.id), ["[ ] Add the export command", "[ ] Document it"]);
    const children = tasks.filter((task: any) => task.parent_id === created.id).map((task: any) => task.title);
    assert.deepEqual(children.sort(), ["1. Writer", "Step 2: Tests"]);
    const writer = tasks.find((task: any) => task.title === "1. Writer");
    assert.deepEqual(await steps(writer.id), ["[ ] Quote fields", "[x] Pick the line ending"]);
    // The model is told where its plan went, after the tool's result.
    assert.match(told, new RegExp(`approved plan is recorded on a new task ${created.id}`));
    // The session worked on it (and handed it back at its end).
    const { sessions } = await project.getTask(created.id);
    assert.equal(sessions[0]?.session_id, run.sessionId);
  });

  it("an approved plan on the session's active task is a decision on it, its steps progress items", async () => {
    const task = (await project.arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Import" }))).task;
    const plan = "Import plan\n\n1. Parse the file\n2. Insert the rows\n- [ ] Report the count\n";
    script = stepsScript(
      [
        { id: "start", name: START, input: { task_id: task.id } },
        { id: "plan", name: "ExitPlanMode", input: { plan } },
      ],
      "IMPORT-DONE",
    );
    const run = await runClaudeApproving({ sandbox, baseUrl: fake!.baseUrl, prompt: "Plan the import." });
    ok(run);
    assert.equal(run.result?.result, "IMPORT-DONE");
    const context = await project.withStore(async (service) => {
      const { data } = await service.getTask({ task_id: task.id, include: ["context_all"] });
      return (data.context_all ?? []).flatMap((entry) => (entry.type === "decision" ? [entry.content] : []));
    });
    assert.deepEqual(context, [`Plan approved in Claude Code:\n\n${plan}`]);
    assert.deepEqual(await steps(task.id), ["[ ] Parse the file", "[ ] Insert the rows", "[ ] Report the count"]);
  });
});
