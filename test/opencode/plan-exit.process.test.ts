import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { hostMissing } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { type ChatRequest, type FakeModel, type Reply, startFakeModel, textOf, toolHistory } from "./fake-model.js";
import {
  createSandbox,
  type OpencodeSandbox,
  type OpencodeServer,
  opencodeConfig,
  REPO,
  startOpencodeServer,
  within,
} from "./harness.js";

/**
 * OpenCode's plan agent with the real binary: `opencode serve` (the headless server a desktop or
 * web client drives) with OPENCODE_EXPERIMENTAL_PLAN_MODE=1, which gives the plan agent its
 * `plan_exit` tool. The scripted model writes the plan to the file OpenCode names and calls
 * plan_exit; OpenCode asks "switch to the build agent?" as a question, which this test answers
 * through the server's API (GET /question, POST /question/{id}/reply) as the person would.
 * (`opencode run` creates its session with plan_exit and question denied, so no run can.)
 */

/** Bounds one session's turn, so that a hung server fails the test instead of stalling the run. */
const TURN_MS = 150_000;
const START_MS = 90_000;

const cannotRun = requirement("the real-opencode tests", hostMissing("opencode"));

const APPROVE = "PLAN-APPROVE";
const REJECT = "PLAN-REJECT";
const FRESH = "PLAN-FRESH";

const PLAN =
  "# Plan: Cache the config\n\n1. Read it once\n2. Invalidate on change\n\n## Step 3: Tests\n- Cover the reload\n";
const REJECTED_PLAN = "# Plan: Drop the cache\n\n1. Remove it\n2. Read the file each time\n";
const FRESH_PLAN = "# Plan: Rotate the logs\n\n- [ ] Rotate daily\n- [ ] Keep a week\n";

const firstUserText = (request: ChatRequest) =>
  textOf(request.messages.find((message) => message.role === "user") ?? { role: "user" });
const allText = (request: ChatRequest) => request.messages.map(textOf).join("\n");

interface Turn {
  session: string;
  /** The question OpenCode asked at plan_exit. */
  question: any;
  /** The session's messages once the turn ended, as GET /session/{id}/message answers. */
  messages: any[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One session of the plan agent: the prompt is sent, the plan_exit question is answered with
 * `answer` once OpenCode asks it, and the turn is awaited to its end.
 */
async function planTurn(server: OpencodeServer, prompt: string, answer: "Yes" | "No"): Promise<Turn> {
  const session = (await server.request("POST", "/session", { title: prompt })).id as string;
  // The synchronous prompt answers when the session's loop has ended, the answer included.
  const turn = server.request("POST", `/session/${session}/message`, {
    agent: "plan",
    parts: [{ type: "text", text: prompt }],
  });
  let failed: unknown;
  turn.catch((error) => (failed = error));
  let question: any;
  for (const deadline = Date.now() + TURN_MS; !question; await sleep(200)) {
    if (failed) throw failed;
    assert.ok(Date.now() < deadline, `OpenCode asked no question within ${TURN_MS} ms\n${server.output()}`);
    const asked = (await server.request("GET", "/question")) as any[];
    question = asked.find((q) => q.sessionID === session);
  }
  await server.request("POST", `/question/${question.id}/reply`, { answers: [[answer]] });
  await within(turn, TURN_MS, () => `the turn did not end within ${TURN_MS} ms\n${server.output()}`);
  const messages = await server.request("GET", `/session/${session}/message`);
  return { session, question, messages };
}

/** The plan_exit tool part of the session's messages: its state (status, output, error). */
const planExit = (turn: Turn) =>
  turn.messages
    .flatMap((message) => message.parts)
    .find((part: any) => part.type === "tool" && part.tool === "plan_exit")?.state;

describe("OpenCode's plan agent, real binary (opencode serve): plan_exit", { skip: cannotRun }, () => {
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  let server: OpencodeServer;
  let approvedTask: string;
  let rejectedTask: string;
  const turns: Record<string, Turn> = {};
  /** The plan file OpenCode told each session to write. */
  const planFiles: Record<string, string> = {};

  before(async () => {
    sandbox = createSandbox();
    const project = sandbox.project;
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    writeFileSync(
      join(project, "opencode.json"),
      JSON.stringify(opencodeConfig({ plugin: ["./node_modules/arbeit"] })),
    );
    // A git project: OpenCode keeps its plans in the project's .opencode/plans/.
    execFileSync("git", ["init", "-q"], { cwd: project, stdio: "pipe" });
    const arbeit = async (args: string[]) => {
      const result = await runCli(args, { cwd: project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
      return result.json;
    };
    await arbeit(["init"]);
    approvedTask = (await arbeit(["task", "create", "Cache the config", "--json"])).data.task.id;
    rejectedTask = (await arbeit(["task", "create", "Drop the cache", "--json"])).data.task.id;

    model = await startFakeModel((request): Reply => {
      if (!request.tools?.length) return { text: "A plan" };
      const prompt = firstUserText(request);
      const marker = [APPROVE, REJECT, FRESH].find((m) => prompt.includes(m));
      if (!marker) return { text: `No marker in the prompt: ${prompt}` };
      const calls = toolHistory(request);
      const called = (name: string) => calls.some((call) => call.name === name);
      // After plan_exit, approved or not, the turn ends with a word.
      if (called("plan_exit")) return { text: "Over to the build agent." };
      // OpenCode names the plan file in the plan agent's instructions.
      const file = /create your plan at (\S+\.md)/.exec(allText(request))?.[1];
      if (!file) return { text: "OpenCode named no plan file." };
      planFiles[marker] = file;
      const task = marker === APPROVE ? approvedTask : marker === REJECT ? rejectedTask : undefined;
      if (task && !called("arbeit_task_start_work")) return { tool: "arbeit_task_start_work", args: { task_id: task } };
      const plan = marker === APPROVE ? PLAN : marker === REJECT ? REJECTED_PLAN : FRESH_PLAN;
      if (!called("write")) return { tool: "write", args: { filePath: file, content: plan } };
      return { tool: "plan_exit", args: {} };
    });
    server = await startOpencodeServer(sandbox, {
      port: model.port,
      startMs: START_MS,
      env: { OPENCODE_EXPERIMENTAL_PLAN_MODE: "1" },
    });
    turns[APPROVE] = await planTurn(server, `${APPROVE}: plan caching the config`, "Yes");
    turns[REJECT] = await planTurn(server, `${REJECT}: plan dropping the cache`, "No");
    turns[FRESH] = await planTurn(server, `${FRESH}: plan rotating the logs`, "Yes");
    await server.stop();
  });

  after(async () => {
    await server?.stop();
    await model?.close();
    sandbox?.cleanup();
  });

  /** A task's decisions, progress items and subtasks, read from the project's store. */
  const recorded = async (taskId: string) => {
    const service = await openProject({ cwd: sandbox.project });
    try {
      const { data } = await service.getTask({ task_id: taskId, include: ["progress", "context", "children"] });
      return {
        decisions: data.context!.filter((entry) => entry.type === "decision").map((entry) => entry.content),
        progress: data.progress!.map((item) => `[${item.completed ? "x" : " "}] ${item.content}`),
        children: data.children!.map((child) => child.title),
      };
    } finally {
      await service.close();
    }
  };

  it("asks the person, through the server, to approve the plan file the session wrote in .opencode/plans/", () => {
    assert.deepEqual(model.errors, []);
    const file = planFiles[APPROVE]!;
    assert.ok(file.startsWith(join(sandbox.project, ".opencode", "plans")), file);
    assert.match(turns[APPROVE]!.question.questions[0].question, /^Plan at \.opencode\/plans\/.*\.md is complete\./);
    assert.deepEqual(
      turns[APPROVE]!.question.questions[0].options.map((option: any) => option.label),
      ["Yes", "No"],
    );
  });

  it("an approved plan is recorded on the session's active task: a decision, its steps as progress items, its numbered headings as subtasks", async () => {
    assert.equal(planExit(turns[APPROVE]!)?.status, "completed", JSON.stringify(planExit(turns[APPROVE]!)));
    assert.deepEqual(await recorded(approvedTask), {
      decisions: [`Plan approved in OpenCode:\n\n${PLAN}`],
      progress: ["[ ] Read it once", "[ ] Invalidate on change"],
      children: ["Step 3: Tests"],
    });
  });

  it("a rejected plan records nothing: no decision, no progress item, no subtask, no task", async () => {
    const state = planExit(turns[REJECT]!);
    assert.equal(state?.status, "error", JSON.stringify(state));
    assert.match(state.error, /dismissed/);
    assert.deepEqual(await recorded(rejectedTask), { decisions: [], progress: [], children: [] });
    const service = await openProject({ cwd: sandbox.project });
    try {
      const tasks = await service.store.read((tx) => tx.listTasks({ limit: 100, offset: 0 }));
      assert.equal(
        tasks.some((task) => task.title === "Drop the cache" && task.id !== rejectedTask),
        false,
      );
      // All the session did is take up the task and write its plan file.
      const events = await service.store.read((tx) => tx.listEvents({ after_seq: 0, limit: 1000 }));
      const types = events.filter((e) => e.session_id === turns[REJECT]!.session).map((e) => e.event_type);
      assert.deepEqual([...new Set(types)].sort(), ["file_tracked", "task_claimed", "work_started"]);
    } finally {
      await service.close();
    }
  });

  it("an approved plan of a session with no active task becomes a new task the session works on", async () => {
    assert.equal(planExit(turns[FRESH]!)?.status, "completed", JSON.stringify(planExit(turns[FRESH]!)));
    const service = await openProject({ cwd: sandbox.project });
    let taskId: string;
    try {
      const tasks = await service.store.read((tx) => tx.listTasks({ limit: 100, offset: 0 }));
      const task = tasks.find((t) => t.title === "Rotate the logs");
      assert.ok(task, JSON.stringify(tasks.map((t) => t.title)));
      assert.equal(task.plan, FRESH_PLAN);
      assert.deepEqual(await service.sessionTask(turns[FRESH]!.session), { task_id: task.id, active: true });
      taskId = task.id;
    } finally {
      await service.close();
    }
    assert.deepEqual((await recorded(taskId)).progress, ["[ ] Rotate daily", "[ ] Keep a week"]);
  });
});
