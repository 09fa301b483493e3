import assert from "node:assert/strict";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { hostMissing } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { type ChatRequest, type FakeModel, type Reply, startFakeModel, textOf, toolHistory } from "./fake-model.js";
import { createSandbox, type OpencodeSandbox, opencodeConfig, REPO, runOpencode, seedConfigDir } from "./harness.js";

/**
 * Claims follow the conversation, in the real OpenCode: the plugin in OpenCode's process beats for
 * its sessions (ARBEIT_HEARTBEAT_SECONDS=6, meant for tests; a beat every 2 s reaches the store in time even on a loaded machine). An `opencode run` that started work
 * and exited leaves the task free and nobody "working now" at once (its end disposes the
 * project, the plugin's orderly end); one killed with
 * SIGKILL in the middle of a long Bash call held its claim (shortened to a one-second lease)
 * through that call, and frees it within the heartbeat once killed.
 */

const cannotRun = requirement("the real-opencode liveness test", hostMissing("opencode"));
const RUN_TIMEOUT_MS = 120_000;
const HEARTBEAT = 6;
const EXITS = "EXITS-PROMPT";
/**
 * The long call: says it started, then waits until the test says stop (OpenCode runs it in a
 * process group of its own, which outlives a kill of OpenCode's), for two minutes at most.
 */
const LONG_CALL = "touch long-call-started; for i in $(seq 600); do [ -e stop-long-call ] && break; sleep 0.2; done";
const KILLED = "KILLED-PROMPT";

const firstUser = (request: ChatRequest) => textOf(request.messages.find((m) => m.role === "user") ?? { role: "user" });

/** Asks `ask` until it is true; the bound only turns "never" into a failure that says so. */
async function eventually(ask: () => Promise<boolean>, what: string, boundMs = 30_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (!(await ask())) {
    if (Date.now() > until) assert.fail(`${what}: still not so after ${boundMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("OpenCode, real binary: claims follow the conversation", {
  skip: cannotRun,
  timeout: 3 * RUN_TIMEOUT_MS,
}, () => {
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  const tasks: Record<string, string> = {};
  let marker: string;

  const cli = async (args: string[]) =>
    (await runCli([...args, "--json"], { cwd: sandbox.project, env: { HOME: sandbox.home } })).json;
  /** Another session tries to take `task`: whether it got it. */
  const taken = async (task: string) =>
    (await cli(["task", "claim", task, "--session", "ses-intruder"])).success === true;
  const working = async () => (await cli(["status"])).working.map((work: any) => work.task_id);

  before(async () => {
    sandbox = createSandbox();
    const project = sandbox.project;
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    writeFileSync(join(project, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
    seedConfigDir(join(project, ".opencode"));
    assert.equal((await cli(["setup", "opencode"])).success, true);
    tasks.exits = (await cli(["task", "create", "Short run"])).data.task.id;
    tasks.killed = (await cli(["task", "create", "Long run"])).data.task.id;
    marker = join(sandbox.project, "long-call-started");
    sandbox.env.ARBEIT_HEARTBEAT_SECONDS = String(HEARTBEAT);

    model = await startFakeModel(async (request): Promise<Reply> => {
      if (!request.tools?.length) return { text: "Liveness" };
      const called = (name: string) => toolHistory(request).some((call) => call.name === name);
      const first = firstUser(request);
      const task = first.includes(KILLED) ? tasks.killed : tasks.exits;
      if (!called("arbeit_task_start_work")) return { tool: "arbeit_task_start_work", args: { task_id: task } };
      if (first.includes(EXITS)) return { text: "Started, and that is all for this run." };
      if (!called("arbeit_task_claim")) return { tool: "arbeit_task_claim", args: { task_id: task, lease_seconds: 1 } };
      if (!called("bash"))
        return {
          tool: "bash",
          args: { command: LONG_CALL, description: "Run the long suite", timeout: 900_000 },
        };
      return { text: "Not reached: the run is killed during the long call." };
    });
  });

  after(async () => {
    await model?.close();
    sandbox?.cleanup();
  });

  it("an opencode run that exits frees its claim at once and leaves working now", async () => {
    const run = await runOpencode(sandbox, `${EXITS}: start the short task.`, {
      port: model.port,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(model.errors, []);
    const task = (await cli(["task", "get", tasks.exits!])).data.task;
    assert.equal(task.status, "in_progress", "the run did start work on it");
    // The run's end disposes the project (the plugin's orderly end): free at once, no waiting.
    assert.equal(await taken(tasks.exits!), true, "another session takes the exited run's task");
    assert.ok(!(await working()).includes(tasks.exits), "the exited run is not working now");
  });

  it("a run killed with SIGKILL held its claim through a long call, and frees it within the heartbeat", async () => {
    let pid: number | undefined;
    const run = runOpencode(sandbox, `${KILLED}: run the long suite for the long task.`, {
      port: model.port,
      timeoutMs: RUN_TIMEOUT_MS,
      started: (id) => (pid = id),
    });
    let ended: Awaited<typeof run> | undefined;
    void run.then((result) => (ended = result));
    try {
      await eventually(async () => existsSync(marker) || ended !== undefined, "the long call starting", RUN_TIMEOUT_MS);
      assert.equal(
        ended,
        undefined,
        `the run ended before its long call: ${ended?.stderr}\n${ended?.stdout.slice(-3000)}`,
      );
      // Longer than the one-second lease and the heartbeat, with nothing from the conversation.
      await new Promise((resolve) => setTimeout(resolve, (HEARTBEAT + 1) * 1000));
      assert.equal(await taken(tasks.killed!), false, "held during the long call");
      assert.deepEqual(await working(), [tasks.killed]);
    } finally {
      // Killed here, whatever was found: the group, so that the run's own processes go too.
      if (pid && ended === undefined) process.kill(-pid, "SIGKILL");
    }
    writeFileSync(join(sandbox.project, "stop-long-call"), "");
    await run;
    await eventually(() => taken(tasks.killed!), "another session taking the killed run's task");
    assert.ok(!(await working()).includes(tasks.killed), "the killed run is not working now");
  });
});
