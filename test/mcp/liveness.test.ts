import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { connectMcp } from "./mcp-client.js";

/**
 * Claims follow the conversation: `arbeit mcp` lives exactly as long as the conversation that
 * started it, and beats for its session. A short heartbeat (ARBEIT_HEARTBEAT_SECONDS, meant for
 * tests) stands in for the minute, and a claim taken with a one-second lease for a long one.
 */
const HEARTBEAT = 6;

async function project() {
  const temp = tempDir();
  const cli = (args: string[]) => runCli([...args, "--json"], { cwd: temp.dir });
  assert.equal((await cli(["init"])).code, 0);
  const task = (await cli(["task", "create", "Long test run"])).json.data.task.id as string;
  return { ...temp, cli, task };
}

/** Another session tries to take the task: its envelope. */
async function intruder(cli: (args: string[]) => Promise<{ json: any }>, task: string) {
  return (await cli(["task", "claim", task, "--session", "ses-intruder", "--agent", "other"])).json;
}

/** Asks `ask` until it is true; the bound only turns "never" into a failure that says so. */
async function eventually(ask: () => Promise<boolean>, what: string, boundMs = 30_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (!(await ask())) {
    if (Date.now() > until) assert.fail(`${what}: still not so after ${boundMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("arbeit mcp keeps its conversation's claims alive, and no longer", () => {
  it("holds a claim past its lease while the server runs, and frees it at once when stdin closes", async () => {
    const { dir, cleanup, cli, task } = await project();
    const mcp = await connectMcp(dir, {
      env: { ARBEIT_HEARTBEAT_SECONDS: String(HEARTBEAT) },
      args: ["--session", "ses-conversation"],
    });
    try {
      await mcp.ok("arbeit_task_start_work", { task_id: task });
      await mcp.ok("arbeit_task_claim", { task_id: task, lease_seconds: 1 });
      // One long tool call: nothing from the conversation for longer than the lease and the heartbeat.
      await sleep((HEARTBEAT + 1) * 1000);
      const refused = await intruder(cli, task);
      assert.equal(refused.error?.code, "ALREADY_CLAIMED", JSON.stringify(refused));
      const status = (await cli(["status"])).json;
      assert.deepEqual(
        status.working.map((work: any) => work.session_id),
        ["ses-conversation"],
      );
      await mcp.ok("arbeit_progress_add", { task_id: task, items: ["Tests ran"] });

      await mcp.close();
      // The conversation ended in order: free for anyone at once, and nobody is working on it.
      await eventually(async () => (await intruder(cli, task)).success === true, "the claim freed on close");
      const after = (await cli(["status"])).json;
      assert.deepEqual(
        after.working.map((work: any) => work.session_id),
        [],
      );
    } finally {
      await mcp.close();
      cleanup();
    }
  });

  it("frees the claims of a server killed with SIGKILL within the heartbeat, and it leaves working now", async () => {
    const { dir, cleanup, cli, task } = await project();
    const mcp = await connectMcp(dir, {
      env: { ARBEIT_HEARTBEAT_SECONDS: String(HEARTBEAT) },
      args: ["--session", "ses-killed"],
    });
    try {
      // Work started with the default lease of a quarter of an hour.
      await mcp.ok("arbeit_task_start_work", { task_id: task });
      assert.equal((await intruder(cli, task)).error?.code, "ALREADY_CLAIMED");
      process.kill(mcp.pid, "SIGKILL");
      const killedAt = Date.now();
      await eventually(async () => (await intruder(cli, task)).success === true, "the claim freed after SIGKILL");
      // Not held past the heartbeat's length (a beat at most a third of it before the kill), with
      // room for the CLI's own start-up: far below the quarter of an hour it was taken for.
      assert.ok(Date.now() - killedAt < 60_000);
      const status = (await cli(["status"])).json;
      assert.deepEqual(
        status.working.map((work: any) => work.session_id),
        [],
      );
    } finally {
      await mcp.close().catch(() => {});
      cleanup();
    }
  });
});
