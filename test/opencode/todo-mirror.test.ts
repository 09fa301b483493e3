import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { createArbeitHooks } from "../../src/opencode/plugin.js";
import { todosOf } from "../../src/opencode/todos.js";
import { event, type Hooks, pluginProject, startTask, succeed } from "./plugin-driver.js";

/** OpenCode's todo list (todo.updated events) mirrored as progress items of the session's active task. */

type Status = "pending" | "in_progress" | "completed" | "cancelled";

const todos = (hooks: Hooks, sessionID: string, list: Array<[string, Status]>) =>
  event(hooks, {
    type: "todo.updated",
    properties: { sessionID, todos: list.map(([content, status]) => ({ content, status, priority: "medium" })) },
  });

describe("the OpenCode plugin's todo mirror", () => {
  let dir: string;
  let hooks: Hooks;
  const project = pluginProject();
  beforeEach(() => {
    ({ dir, hooks } = project);
  });

  /** The task's progress items as "[x] text", in order. */
  async function steps(taskId: string, via: Hooks = hooks): Promise<string[]> {
    const data = await succeed(via, "arbeit_task_get", { task_id: taskId, include: ["progress"] });
    return data.progress.map((item: any) => `[${item.completed ? "x" : " "}] ${item.content}`);
  }

  it("adds each new todo as a progress item of the session's active task, in the list's order", async () => {
    const id = await startTask(hooks);
    await todos(hooks, "ses_main", [
      ["Read the spec", "in_progress"],
      ["Write the parser", "pending"],
      ["Ship it", "completed"],
    ]);
    assert.deepEqual(await steps(id), ["[ ] Read the spec", "[ ] Write the parser", "[x] Ship it"]);
  });

  it("completes a todo's item when the todo is completed, and adds nothing twice", async () => {
    const id = await startTask(hooks);
    await todos(hooks, "ses_main", [
      ["Read the spec", "in_progress"],
      ["Write the parser", "pending"],
    ]);
    await todos(hooks, "ses_main", [
      ["Read the spec", "completed"],
      ["Write the parser", "in_progress"],
    ]);
    await todos(hooks, "ses_main", [
      ["Read the spec", "completed"],
      ["Write the parser", "in_progress"],
    ]);
    assert.deepEqual(await steps(id), ["[x] Read the spec", "[ ] Write the parser"]);
  });

  it("keeps the mirror idempotent across an OpenCode restart (todos are matched by their text)", async () => {
    const id = await startTask(hooks);
    await todos(hooks, "ses_main", [["Read the spec", "pending"]]);
    await hooks.dispose!();
    project.hooks = hooks = await createArbeitHooks({ directory: dir }, {}, {});
    await todos(hooks, "ses_main", [
      ["Read the spec", "completed"],
      ["Write the parser", "pending"],
    ]);
    assert.deepEqual(await steps(id), ["[x] Read the spec", "[ ] Write the parser"]);
  });

  it("matches a todo to a step the agent already added with arbeit_progress_add", async () => {
    const id = await startTask(hooks);
    await succeed(hooks, "arbeit_progress_add", { task_id: id, items: ["Write the parser"] });
    await todos(hooks, "ses_main", [["Write  the parser ", "completed"]]);
    assert.deepEqual(await steps(id), ["[x] Write the parser"]);
  });

  it("leaves items as they are for cancelled or removed todos, adds nothing for a new cancelled one, and never reopens a step", async () => {
    const id = await startTask(hooks);
    await todos(hooks, "ses_main", [
      ["Read the spec", "completed"],
      ["Write the parser", "pending"],
      ["Benchmark", "pending"],
    ]);
    await todos(hooks, "ses_main", [
      ["Read the spec", "pending"],
      ["Write the parser", "cancelled"],
      ["Port to Rust", "cancelled"],
    ]);
    assert.deepEqual(await steps(id), ["[x] Read the spec", "[ ] Write the parser", "[ ] Benchmark"]);
  });

  it("mirrors nothing for a session without active work, a sub-agent's included", async () => {
    const id = await startTask(hooks);
    await event(hooks, { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_main" } } });
    await todos(hooks, "ses_child", [["Child step", "pending"]]);
    await todos(hooks, "ses_idle", [["Idle step", "pending"]]);
    assert.deepEqual(await steps(id), []);
  });

  it("adds each step once when two updates arrive together", async () => {
    const id = await startTask(hooks);
    await Promise.all([
      todos(hooks, "ses_main", [["Read the spec", "pending"]]),
      todos(hooks, "ses_main", [["Read the spec", "completed"]]),
    ]);
    assert.deepEqual(await steps(id), ["[x] Read the spec"]);
  });

  it("records the mirrored steps as the session's own (news of other sessions leaves them out)", async () => {
    const id = await startTask(hooks);
    await todos(hooks, "ses_main", [["Read the spec", "pending"]]);
    const data = await succeed(hooks, "arbeit_task_get", { task_id: id, include: ["recent_events"] });
    const added = data.recent_events.find((e: any) => e.event_type === "progress_added");
    assert.deepEqual([added.session_id, added.agent], ["ses_main", "build"]);
  });
});

describe("todos of a todo.updated event", () => {
  it("keep content and status, skipping malformed entries", () => {
    assert.deepEqual(
      todosOf({
        todos: [
          { content: "a", status: "pending", priority: "high", id: "1" },
          { content: "", status: "pending" },
          { content: "b" },
          null,
          "c",
        ],
      }),
      [{ content: "a", status: "pending" }],
    );
    assert.deepEqual(todosOf({}), []);
    assert.deepEqual(todosOf(null), []);
  });
});
