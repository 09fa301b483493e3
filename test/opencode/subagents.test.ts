import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { hostMissing } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { type ChatRequest, type FakeModel, type Reply, startFakeModel, textOf, toolHistory } from "./fake-model.js";
import {
  createSandbox,
  type OpencodeRun,
  type OpencodeSandbox,
  opencodeConfig,
  REPO,
  runOpencode,
  seedConfigDir,
} from "./harness.js";

/**
 * Two sub-agents at once, with the real OpenCode binary (docs/opencode.md, docs/multi-agent.md):
 * the main agent starts two `task` tool calls in one step, OpenCode runs both child sessions
 * concurrently, and each child starts work on its own task and writes its own file. Every child
 * session is an Arbeit session of its own, so neither start_work collides with the other
 * (ALREADY_WORKING) and each file lands on its own sub-agent's task, under that sub-agent's session.
 */

const RUN_TIMEOUT_MS = 120_000;
const PROMPT = "Split the work between two sub-agents";
/** How long a sub-agent's model step waits for the other sub-agent to have started work. */
const BARRIER_MS = 30_000;

interface Worker {
  name: string;
  title: string;
  /** The marker in the sub-agent's prompt (its first user message) that tells the script who asks. */
  marker: string;
  file: string;
  content: string;
}

const WORKERS: readonly Worker[] = [
  { name: "one", title: "Parallel task one", marker: "SUBAGENT-ONE-MARKER", file: "one/a.txt", content: "from one\n" },
  { name: "two", title: "Parallel task two", marker: "SUBAGENT-TWO-MARKER", file: "two/b.txt", content: "from two\n" },
];

/** A `task` tool call as `opencode run --format json` reports it: OpenCode's child session and its parent. */
interface TaskCall {
  child: string;
  parent: string;
  output: string;
  start: number;
  end: number;
}

const cannotRun = requirement("the real-opencode tests", hostMissing("opencode"));

const firstUserText = (request: ChatRequest) =>
  textOf(request.messages.find((message) => message.role === "user") ?? { role: "user" });

/** Resolves true once every one of `names` has been `arrive`d, or false after `ms`. */
function barrier(names: readonly string[], ms: number) {
  const arrived = new Set<string>();
  const waiters: Array<() => void> = [];
  return {
    arrive(name: string): void {
      arrived.add(name);
      if (names.every((n) => arrived.has(n))) for (const wake of waiters.splice(0)) wake();
    },
    wait(): Promise<boolean> {
      if (names.every((n) => arrived.has(n))) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}

describe("OpenCode, real binary: two sub-agents at once, each on its own task", { skip: cannotRun }, () => {
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  let run: OpencodeRun;
  const taskIds: Record<string, string> = {};
  /** Per sub-agent: whether, when it was about to write, the other one had already started work. */
  const sawOtherStarted: Record<string, boolean> = {};
  let runMs = 0;

  // The run happens once, in whichever test comes first: Bun ignores a timeout given to a
  // `before` hook (5 s default), but honours one given to a test.
  let running: Promise<void> | undefined;
  const ran = () => {
    running ??= runBoth();
    return running;
  };
  const test = (name: string, fn: () => void | Promise<void>) =>
    it(name, { timeout: RUN_TIMEOUT_MS + 60_000 }, async () => {
      await ran();
      await fn();
    });

  async function runBoth(): Promise<void> {
    sandbox = createSandbox();
    const project = sandbox.project;
    // Set up as opencode-run.test.ts does: the package in node_modules, a scripted model in
    // opencode.json, a seeded .opencode/ and the plugin file written by `arbeit setup opencode`.
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    writeFileSync(join(project, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
    seedConfigDir(join(project, ".opencode"));
    const arbeit = async (args: string[]) => {
      const result = await runCli(args, { cwd: project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
      return result.json;
    };
    assert.equal((await arbeit(["setup", "opencode", "--json"])).success, true);
    for (const worker of WORKERS) {
      taskIds[worker.name] = (await arbeit(["task", "create", worker.title, "--json"])).data.task.id;
    }

    const started = barrier(
      WORKERS.map((worker) => worker.name),
      BARRIER_MS,
    );
    model = await startFakeModel(async (request): Promise<Reply> => {
      // The title agent has no tools.
      if (!request.tools?.length) return { text: "Parallel work" };
      const calls = toolHistory(request);
      const called = (name: string) => calls.some((call) => call.name === name);
      const worker = WORKERS.find((w) => firstUserText(request).includes(w.marker));
      if (worker) {
        if (!called("arbeit_task_start_work")) {
          return { tool: "arbeit_task_start_work", args: { task_id: taskIds[worker.name] } };
        }
        if (!called("write")) {
          // Hold the write back until the other sub-agent has started work too: if OpenCode
          // runs the two concurrently this pins the overlap down; if it ran them one after
          // the other, the wait times out and the overlap assertion below says so.
          started.arrive(worker.name);
          sawOtherStarted[worker.name] = await started.wait();
          return { tool: "write", args: { filePath: worker.file, content: worker.content } };
        }
        return { text: `${worker.marker} finished.` };
      }
      if (!called("task")) {
        // Both sub-agents in one assistant step: OpenCode runs them at the same time.
        return {
          tools: WORKERS.map((w) => ({
            tool: "task",
            args: {
              description: `Work on ${w.title}`,
              prompt: `${w.marker}: call arbeit_task_start_work with task_id ${taskIds[w.name]}, then write ${w.file}.`,
              subagent_type: "general",
            },
          })),
        };
      }
      return { text: "Both sub-agents are done." };
    });
    const t0 = Date.now();
    run = await runOpencode(sandbox, PROMPT, {
      port: model.port,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    runMs = Date.now() - t0;
  }

  after(async () => {
    await model?.close();
    sandbox?.cleanup();
  });

  const mainSession = () => run.events[0]?.sessionID as string;

  /** The main session's `task` tool calls, by sub-agent. */
  function taskCalls(): Map<string, TaskCall> {
    const byWorker = new Map<string, TaskCall>();
    for (const event of run.events) {
      if (event.type !== "tool_use" || event.part.tool !== "task") continue;
      const state = event.part.state;
      assert.equal(state.status, "completed", JSON.stringify(state));
      const worker = WORKERS.find((w) => String(state.input.prompt).includes(w.marker));
      assert.ok(worker, `a task call for neither sub-agent: ${state.input.prompt}`);
      assert.ok(!byWorker.has(worker.name), `${worker.name} was started twice`);
      byWorker.set(worker.name, {
        child: state.metadata.sessionId,
        parent: state.metadata.parentSessionId,
        output: state.output,
        start: state.time.start,
        end: state.time.end,
      });
    }
    return byWorker;
  }

  /** What each sub-agent's arbeit_task_start_work returned, read from its last request to the model. */
  function startWorkResults(): Map<string, any> {
    const results = new Map<string, any>();
    for (const request of model.requests) {
      const worker = WORKERS.find((w) => firstUserText(request).includes(w.marker));
      const start = worker && toolHistory(request).find((call) => call.name === "arbeit_task_start_work");
      if (worker && start?.result) results.set(worker.name, JSON.parse(start.result));
    }
    return results;
  }

  test("runs to the end: one step with two task calls, both sub-agents completed", () => {
    assert.equal(run.timedOut, false, `opencode did not finish within ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
    assert.equal(run.code, 0, `opencode exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-2000)}`);
    assert.deepEqual(model.errors, []);
    process.stderr.write(`  (opencode run took ${runMs} ms)\n`);
    // The main session asked for both sub-agents in a single assistant step.
    const mainSteps = model.requests.filter(
      (request) => request.tools?.length && firstUserText(request).includes(PROMPT),
    );
    assert.ok(mainSteps.length >= 2, "the main session never came back after the sub-agents");
    const taskMessages = mainSteps
      .at(-1)!
      .messages.filter((message) => message.tool_calls?.some((call) => call.function.name === "task"));
    assert.equal(taskMessages.length, 1, "the two task calls were not one assistant step");
    assert.equal(taskMessages[0]!.tool_calls!.length, 2);
    const calls = taskCalls();
    assert.deepEqual([...calls.keys()].sort(), ["one", "two"]);
    for (const worker of WORKERS) {
      assert.match(calls.get(worker.name)!.output, new RegExp(`${worker.marker} finished\\.`));
      assert.equal(readFileSync(join(sandbox.project, worker.file), "utf8"), worker.content);
    }
  });

  test("gives each sub-agent a child session of its own, started from the main session", () => {
    const main = mainSession();
    assert.match(main, /^ses_/);
    const calls = taskCalls();
    const one = calls.get("one")!;
    const two = calls.get("two")!;
    for (const call of [one, two]) {
      assert.match(call.child, /^ses_/);
      assert.notEqual(call.child, main);
      assert.equal(call.parent, main);
    }
    assert.notEqual(one.child, two.child);
  });

  test("lets each sub-agent start work on its own task, neither refused", () => {
    const calls = taskCalls();
    const results = startWorkResults();
    for (const worker of WORKERS) {
      const result = results.get(worker.name);
      assert.ok(result, `${worker.name} never got an answer from arbeit_task_start_work`);
      assert.equal(result.success, true, `${worker.name}: ${JSON.stringify(result)}`);
      assert.notEqual(result.error?.code, "ALREADY_WORKING");
      assert.equal(result.data.task.id, taskIds[worker.name]);
      assert.equal(result.data.session_id, calls.get(worker.name)!.child);
      assert.equal(result.data.session_linked, true);
    }
  });

  test("records each task as claimed and worked on by its own sub-agent's session, and files under it", async () => {
    const main = mainSession();
    const calls = taskCalls();
    const service = await openProject({ cwd: sandbox.project });
    try {
      for (const worker of WORKERS) {
        const taskId = taskIds[worker.name]!;
        const child = calls.get(worker.name)!.child;
        const state = await service.store.read(async (tx) => ({
          task: await tx.getTask(taskId),
          working: await tx.workingOn(taskId),
          active: await tx.activeWork(child),
          files: await tx.filesOf(taskId),
        }));
        assert.equal(state.task?.title, worker.title);
        assert.equal(state.task?.status, "in_progress");
        // The claim was the sub-agent's own; the run has ended since, and the claim with its conversation.
        const claims = await service.store.read((tx) =>
          tx.listEvents({ after_seq: 0, task_id: taskId, event_types: ["task_claimed"], limit: 10 }),
        );
        assert.deepEqual(
          claims.map((event) => event.session_id),
          [child],
          `${worker.name} was claimed by ${claims.map((event) => event.session_id)}`,
        );
        assert.equal(state.task?.claim_session, null);
        assert.deepEqual(
          state.working.map((work) => [work.session_id, work.agent]),
          [[child, "general"]],
        );
        assert.equal(state.active?.task_id, taskId);
        assert.deepEqual(
          state.files.map((file) => [file.file_path, file.operation, file.session_id]),
          [[worker.file, "write", child]],
        );
      }
      // The main session itself did no Arbeit work at all.
      const mainWork = await service.store.read((tx) => tx.activeWork(main));
      assert.equal(mainWork, undefined);
      const events = await service.store.read((tx) => tx.listEvents({ after_seq: 0, limit: 100 }));
      assert.ok(
        events.every((event) => event.session_id !== main),
        "an event was recorded for the main session",
      );
    } finally {
      await service.close();
    }
  });

  test("ran the two sub-agents at the same time: both started work before either wrote its file", async () => {
    // OpenCode's own timings: each task call began before the other one ended.
    const calls = taskCalls();
    const one = calls.get("one")!;
    const two = calls.get("two")!;
    assert.ok(
      one.start < two.end && two.start < one.end,
      `task calls did not overlap: ${JSON.stringify(Object.fromEntries(calls))}`,
    );
    // Each sub-agent, about to write, found the other one already working.
    assert.deepEqual(sawOtherStarted, { one: true, two: true });
    // The event log tells the same: both work_started events come before both file_tracked ones.
    const service = await openProject({ cwd: sandbox.project });
    try {
      const events = await service.store.read((tx) => tx.listEvents({ after_seq: 0, limit: 100 }));
      const seqs = (type: string) =>
        events.filter((event) => event.event_type === type).map((event) => [event.seq, event.task_id] as const);
      const starts = seqs("work_started");
      const writes = seqs("file_tracked");
      assert.deepEqual(starts.map(([, task]) => task).sort(), [taskIds.one, taskIds.two].sort());
      assert.deepEqual(writes.map(([, task]) => task).sort(), [taskIds.one, taskIds.two].sort());
      const lastStart = Math.max(...starts.map(([seq]) => seq));
      const firstWrite = Math.min(...writes.map(([seq]) => seq));
      assert.ok(lastStart < firstWrite, `events: ${events.map((e) => `${e.seq} ${e.event_type}`).join(", ")}`);
    } finally {
      await service.close();
    }
  });
});
