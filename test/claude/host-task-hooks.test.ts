import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { outlinePlan } from "../../src/service/host-plans.js";
import { openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { hookPayload, runHook } from "./hook-input.js";

/**
 * Claude Code's own task list and approved plans through the built CLI's hooks, fed payloads
 * shaped as the real Claude Code sends them (docs/claude-code-findings.md; the real binary:
 * claude-host-tasks.test.ts): PostToolUse of TaskCreate, TaskUpdate, TodoWrite and ExitPlanMode,
 * TaskCreated and TaskCompleted.
 */

const SESSION = "9c0d1e2f-claude-session";

describe("Claude Code hooks: the host's task list and plans", () => {
  let dir: string;
  let cleanup: () => void;

  const call = async (tool: string, args: object, session = SESSION) => {
    const result = await runCli(["--session", session, "--agent", "claude-code", "call", tool, JSON.stringify(args)], {
      cwd: dir,
    });
    assert.equal(result.code, 0, `${tool}: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };
  const hook = async (name: string, event: string, fields: Record<string, unknown>, session = SESSION) => {
    const result = await runHook(name, hookPayload(dir, session, event, fields), dir);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "");
    return result.stdout;
  };
  const taskCreate = (id: string, subject: string) =>
    hook("post-tool-use", "PostToolUse", {
      tool_name: "TaskCreate",
      tool_input: { subject, description: "what to do" },
      tool_response: { task: { id, subject } },
      tool_use_id: `toolu_${id}`,
    });
  const taskUpdate = (input: Record<string, unknown>) =>
    hook("post-tool-use", "PostToolUse", {
      tool_name: "TaskUpdate",
      tool_input: input,
      tool_response: { success: true, taskId: input.taskId, updatedFields: Object.keys(input) },
    });
  const steps = async (taskId: string) => {
    const data = await call("arbeit_task_get", { task_id: taskId, include: ["progress"] });
    return data.progress.map((item: any) => `[${item.completed ? "x" : " "}] ${item.content}`);
  };
  const started = async (title: string, session = SESSION) => {
    const id = (await call("arbeit_task_create", { title }, session)).task.id;
    await call("arbeit_task_start_work", { task_id: id }, session);
    return id;
  };

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-claude-host-tasks-"));
    await call("arbeit_init", {});
  });
  after(() => cleanup());

  it("TaskCreated and TaskCompleted alone keep one item per host task, by its id", async () => {
    const id = await started("Ship the parser");
    await hook("task-created", "TaskCreated", { task_id: "1", task_subject: "Write it", task_description: "" });
    await hook("task-created", "TaskCreated", { task_id: "2", task_subject: "Test it", task_description: "" });
    await hook("task-created", "TaskCreated", { task_id: "1", task_subject: "Write it", task_description: "" });
    await hook("task-completed", "TaskCompleted", { task_id: "2", task_subject: "Test it", task_description: "" });
    assert.deepEqual(await steps(id), ["[ ] Write it", "[x] Test it"]);
    // PostToolUse of the same calls adds nothing more.
    await taskCreate("1", "Write it");
    await taskUpdate({ taskId: "2", status: "completed" });
    assert.deepEqual(await steps(id), ["[ ] Write it", "[x] Test it"]);
    await call("arbeit_task_stop_work", { task_id: id });
  });

  it("a renamed host task keeps its item; a deleted one leaves it; one completed before Arbeit saw it is added done", async () => {
    const id = await started("Ship the lexer");
    await taskCreate("1", "Tokenise");
    await taskUpdate({ taskId: "1", subject: "Tokenise everything", status: "in_progress" });
    await taskUpdate({ taskId: "1", status: "deleted" });
    // Task 7 was created before this session had work: its completion names its subject.
    await hook("task-completed", "TaskCompleted", { task_id: "7", task_subject: "Read the spec" });
    // An update naming only an id Arbeit never saw has no text to add.
    await taskUpdate({ taskId: "8", status: "in_progress" });
    assert.deepEqual(await steps(id), ["[ ] Tokenise", "[x] Read the spec"]);
    await call("arbeit_task_stop_work", { task_id: id });
  });

  it("the same host ids in another session are other steps", async () => {
    const other = "another-claude-session";
    const id = (await call("arbeit_task_create", { title: "Shared work" })).task.id;
    await call("arbeit_task_start_work", { task_id: id });
    await taskCreate("1", "Mine");
    await call("arbeit_task_stop_work", { task_id: id });
    await call("arbeit_task_start_work", { task_id: id }, other);
    await hook("task-completed", "TaskCompleted", { task_id: "1", task_subject: "Theirs" }, other);
    assert.deepEqual(await steps(id), ["[ ] Mine", "[x] Theirs"]);
    await call("arbeit_task_stop_work", { task_id: id }, other);
  });

  it("TodoWrite mirrors its whole list by text", async () => {
    const id = await started("Ship the docs");
    const todoWrite = (status: string) =>
      hook("post-tool-use", "PostToolUse", {
        tool_name: "TodoWrite",
        tool_input: {
          todos: [
            { content: "Outline", status, activeForm: "Outlining" },
            { content: "Draft", status: "pending", activeForm: "Drafting" },
          ],
        },
        tool_response: { oldTodos: [], newTodos: [] },
      });
    await todoWrite("in_progress");
    await todoWrite("completed");
    assert.deepEqual(await steps(id), ["[x] Outline", "[ ] Draft"]);
    await call("arbeit_task_stop_work", { task_id: id });
  });

  it("mirrors nothing without active work, a sub-agent's call included", async () => {
    const id = (await call("arbeit_task_create", { title: "Nobody's" })).task.id;
    await taskCreate("1", "Orphan step");
    await call("arbeit_task_start_work", { task_id: id });
    await hook("post-tool-use", "PostToolUse", {
      tool_name: "TaskCreate",
      tool_input: { subject: "A sub-agent's step" },
      tool_response: { task: { id: "5", subject: "A sub-agent's step" } },
      agent_id: "a0123456789abcdef",
      agent_type: "general-purpose",
    });
    assert.deepEqual(await steps(id), []);
    await call("arbeit_task_stop_work", { task_id: id });
  });

  it("an ExitPlanMode plan recorded twice adds its entry, steps and subtasks once, and tells the model each time", async () => {
    const id = await started("Ship the importer");
    const plan = "# Importer\n\n1. Parse\n\n## Phase 1 - Rows\n- Insert\n";
    const approve = () =>
      hook("post-tool-use", "PostToolUse", {
        tool_name: "ExitPlanMode",
        tool_input: { plan },
        tool_response: { plan, isAgent: false, filePath: "/home/you/.claude/plans/p.md" },
      });
    const first = JSON.parse(await approve()).hookSpecificOutput;
    await approve();
    assert.equal(first.hookEventName, "PostToolUse");
    const data = await call("arbeit_task_get", { task_id: id, include: ["context", "progress", "children"] });
    assert.equal(data.context.filter((entry: any) => entry.type === "decision").length, 1);
    assert.deepEqual(await steps(id), ["[ ] Parse"]);
    assert.deepEqual(
      data.children.map((child: any) => child.title),
      ["Phase 1 - Rows"],
    );
    assert.equal(
      first.additionalContext,
      `Arbeit: the approved plan is recorded on task ${id}, with 1 step(s) as progress items and subtasks ${data.children[0].id}.`,
    );
    assert.deepEqual(await steps(data.children[0].id), ["[ ] Insert"]);
    await call("arbeit_task_stop_work", { task_id: id });
  });

  it("an ExitPlanMode call without a plan, a sub-agent's plan, and other tools record nothing", async () => {
    const before = await openProject({ cwd: dir }).then(async (service) => {
      const count = (await service.store.read((tx) => tx.listTasks({ limit: 1000, offset: 0 }))).length;
      await service.close();
      return count;
    });
    assert.equal(await hook("post-tool-use", "PostToolUse", { tool_name: "ExitPlanMode", tool_input: {} }), "");
    assert.equal(await hook("post-tool-use", "PostToolUse", { tool_name: "TaskList", tool_input: {} }), "");
    // A sub-agent's plan is approved without a person; its parent's plan is the one recorded.
    const plan = "Sub-agent plan\n\n1. Look around\n";
    const subagent = { tool_input: { plan }, tool_response: { plan, isAgent: true }, agent_id: "a0123456789abcdef" };
    assert.equal(await hook("post-tool-use", "PostToolUse", { tool_name: "ExitPlanMode", ...subagent }), "");
    const service = await openProject({ cwd: dir });
    assert.equal((await service.store.read((tx) => tx.listTasks({ limit: 1000, offset: 0 }))).length, before);
    await service.close();
  });
});

describe("the steps of a plan", () => {
  it("are its top-level numbered and checklist items; plain bullets, indented items and code are not", () => {
    const outline = outlinePlan(
      [
        "# Plan: Rename the flag",
        "Why: it confuses people.",
        "1. Rename `--old` to **--new**",
        "   1. a detail, indented",
        "2) Keep `--old` as an alias",
        "- [ ] Tell the users",
        "- [x] Ask the team",
        "- src/cli/flags.ts",
        "```",
        "1. not a step, code",
        "```",
      ].join("\n"),
    );
    assert.equal(outline.title, "Rename the flag");
    assert.deepEqual(
      outline.steps.map((step) => [step.content, step.status]),
      [
        ["Rename --old to --new", "pending"],
        ["Keep --old as an alias", "pending"],
        ["Tell the users", "pending"],
        ["Ask the team", "completed"],
      ],
    );
    assert.deepEqual(outline.sections, []);
  });

  it("are grouped under numbered headings as subtasks, bullets included; other headings group nothing", () => {
    const outline = outlinePlan(
      [
        "Rename plan",
        "## Context",
        "- background, not a step",
        "1. Top step",
        "## 1. Code",
        "- Rename it",
        "## Step 2: Docs",
        "1. Update the README",
        "## Verification",
        "- run the tests (a bullet outside a numbered section)",
      ].join("\n"),
    );
    assert.equal(outline.title, "Rename plan");
    assert.deepEqual(
      outline.steps.map((step) => step.content),
      ["Top step"],
    );
    assert.deepEqual(
      outline.sections.map((section) => [section.title, section.steps.map((step) => step.content)]),
      [
        ["1. Code", ["Rename it"]],
        ["Step 2: Docs", ["Update the README"]],
      ],
    );
  });
});
