import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, it } from "node:test";
import { openProject } from "../../src/service/project.js";
import { afterTool, type Hooks, pluginProject, startTask, succeed } from "./plugin-driver.js";

/**
 * OpenCode's plan agent: it writes its plan to `.opencode/plans/*.md`, and `plan_exit` finishes
 * (tool.execute.after) only when the person approves it. `opencode run` denies plan_exit, so the
 * plugin's hooks are driven here as OpenCode calls them.
 */

const PLAN =
  "# Plan: Cache the config\n\n1. Read it once\n2. Invalidate on change\n\n## Step 3: Tests\n- Cover the reload\n";

describe("the OpenCode plugin and an approved plan (plan_exit)", () => {
  let dir: string;
  let hooks: Hooks;
  const project = pluginProject();
  beforeEach(() => {
    ({ dir, hooks } = project);
  });

  const writePlan = async (session: string, text = PLAN) => {
    const file = join(dir, ".opencode", "plans", "1764200000-cache-the-config.md");
    mkdirSync(join(dir, ".opencode", "plans"), { recursive: true });
    writeFileSync(file, text);
    await afterTool(hooks, session, "write", { filePath: file, content: text });
  };
  const steps = async (taskId: string) => {
    const data = await succeed(hooks, "arbeit_task_get", {
      task_id: taskId,
      include: ["progress", "context", "children"],
    });
    return {
      progress: data.progress.map((item: any) => `[${item.completed ? "x" : " "}] ${item.content}`),
      decisions: data.context.filter((entry: any) => entry.type === "decision").map((entry: any) => entry.content),
      children: data.children.map((child: any) => child.title),
    };
  };

  it("records the plan the session wrote on its active task, with its steps and subtasks, once", async () => {
    const id = await startTask(hooks);
    await writePlan("ses_main");
    await afterTool(hooks, "ses_main", "plan_exit", {});
    await afterTool(hooks, "ses_main", "plan_exit", {});
    assert.deepEqual(await steps(id), {
      progress: ["[ ] Read it once", "[ ] Invalidate on change"],
      decisions: [`Plan approved in OpenCode:\n\n${PLAN}`],
      children: ["Step 3: Tests"],
    });
  });

  it("makes a new task of the plan, which the session works on, when it has no active one", async () => {
    await writePlan("ses_main");
    await afterTool(hooks, "ses_main", "plan_exit", {});
    const service = await openProject({ cwd: dir });
    const tasks = await service.store.read((tx) => tx.listTasks({ limit: 100, offset: 0 }));
    const work = await service.sessionTask("ses_main");
    await service.close();
    const task = tasks.find((t) => t.title === "Cache the config");
    assert.ok(task, JSON.stringify(tasks));
    assert.equal(task.plan, PLAN);
    assert.deepEqual(work, { task_id: task.id, active: true });
    assert.deepEqual((await steps(task.id)).progress, ["[ ] Read it once", "[ ] Invalidate on change"]);
  });

  it("records nothing at plan_exit for a session that wrote no plan, or another session's plan", async () => {
    const id = await startTask(hooks);
    await writePlan("ses_other");
    await afterTool(hooks, "ses_main", "plan_exit", {});
    assert.deepEqual(await steps(id), { progress: [], decisions: [], children: [] });
  });
});
