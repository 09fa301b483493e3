import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CLI, runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { setUpArbeitProject } from "./arbeit-project.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import {
  type FakeAnthropic,
  firstUserText,
  type MessagesRequest,
  startFakeAnthropic,
  toolResults,
} from "./fake-anthropic.js";

/**
 * Claims follow the conversation, in the real Claude Code CLI: the conversation starts work on a
 * task, shortens its claim to a one-second lease, then runs one Bash call that takes longer than
 * that lease and the heartbeat (ARBEIT_HEARTBEAT_SECONDS=6, meant for tests; a beat every 2 s reaches the store in time even on a loaded machine). Inside that call
 * another session tries to take the task; it is refused, since the conversation's `arbeit mcp`
 * kept beating. The conversation's next write to the task goes through (no CLAIM_MOVED). On a
 * local SQLite store, and in a checkout pointed at `arbeit serve`, where the beats travel to the
 * service as hook steps.
 */

const cannotRun = requirement("the real-Claude-Code liveness test", claudeMissing());
const RUN_TIMEOUT_MS = 90_000;
const HEARTBEAT = 6;
const START = "mcp__arbeit__arbeit_task_start_work";
const CLAIM = "mcp__arbeit__arbeit_task_claim";
const PROGRESS = "mcp__arbeit__arbeit_progress_add";

for (const mode of ["sqlite", "serve"] as const) {
  describe(`Claude Code, real binary (${mode === "serve" ? "through arbeit serve" : "local SQLite"}): a long tool call keeps the claim`, {
    skip: cannotRun,
    timeout: 4 * RUN_TIMEOUT_MS,
  }, () => {
    let sandbox: ClaudeSandbox;
    let fake: FakeAnthropic;
    let server: UiProject | undefined;
    let service: Service | undefined;
    let run: ClaudeRun;
    let taskId: string;
    let intruderFile: string;

    function script(request: MessagesRequest) {
      if (!firstUserText(request).includes("LIVENESS-PROMPT")) return { text: "title" };
      const done = toolResults(request);
      const call = (id: string, name: string, input: Record<string, unknown>) => ({ tools: [{ id, name, input }] });
      if (!done.has("toolu_start")) return call("toolu_start", START, { task_id: taskId });
      if (!done.has("toolu_short")) return call("toolu_short", CLAIM, { task_id: taskId, lease_seconds: 1 });
      // One long call: longer than the lease and the heartbeat; meanwhile another session tries
      // to take the task (the checkout's CLI: the local store, or the service with the token).
      const intrude = `"${process.execPath}" "${CLI}" task claim ${taskId} --session ses-intruder --json`;
      if (!done.has("toolu_long"))
        return call("toolu_long", "Bash", {
          command: `sleep ${HEARTBEAT + 2}; ${intrude} > "${intruderFile}"; true`,
          description: "Run the long test suite",
        });
      if (!done.has("toolu_progress"))
        return call("toolu_progress", PROGRESS, { task_id: taskId, items: ["The long test run passed"] });
      return { text: "LIVENESS-DONE" };
    }

    const resultOf = (id: string) => {
      for (const request of [...fake.requests].reverse()) {
        const found = toolResults(request).get(id);
        if (found) return found;
      }
      return undefined;
    };
    const diagnosis = () => `${run?.stderr}\n${run?.stdout.slice(-3000)}\n${service?.stderr() ?? ""}`;

    before(
      async () => {
        sandbox = createSandbox();
        intruderFile = join(sandbox.root, "intruder.json");
        const env: Record<string, string> = { ARBEIT_HEARTBEAT_SECONDS: String(HEARTBEAT) };
        if (mode === "sqlite") {
          const setup = await setUpArbeitProject(sandbox, "liveness-project", { install: false });
          taskId = (await setup.arbeit("task", "create", "Run the whole suite", "--json")).task.id;
        } else {
          server = await uiProject("sqlite");
          env.ARBEIT_TOKEN = await makeToken(server, ["--agent", "claude-laptop"]);
          service = await startService(server);
          taskId = (await server.cli(["task", "create", "Run the whole suite"])).task.id;
          for (const args of [
            ["init", "--server", service.url, "--json"],
            ["setup", "claude", "--json"],
          ]) {
            const result = await runCli(args, { cwd: sandbox.project, env: { HOME: sandbox.home } });
            assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
          }
        }
        fake = await startFakeAnthropic(script);
        run = await runClaude({
          sandbox,
          baseUrl: fake.baseUrl,
          prompt: "LIVENESS-PROMPT: run the suite for the task.",
          allowedTools: ["mcp__arbeit", "Bash"],
          timeoutMs: RUN_TIMEOUT_MS,
          env,
        });
      },
      { timeout: 3 * RUN_TIMEOUT_MS },
    );

    after(async () => {
      await fake?.close();
      sandbox?.cleanup();
      await service?.stop("SIGKILL");
      await server?.close();
    });

    it("runs to its end", () => {
      assert.equal(run.timedOut, false, diagnosis());
      assert.equal(run.result?.result, "LIVENESS-DONE", diagnosis());
      assert.equal(resultOf("toolu_short")?.isError, false, JSON.stringify(resultOf("toolu_short")));
    });

    it("another session could not take the task during the long call", () => {
      assert.ok(existsSync(intruderFile), `the Bash call ran: ${JSON.stringify(resultOf("toolu_long"))}`);
      const intruder = JSON.parse(readFileSync(intruderFile, "utf8"));
      assert.equal(intruder.success, false, JSON.stringify(intruder));
      assert.equal(intruder.error.code, "ALREADY_CLAIMED", JSON.stringify(intruder));
    });

    it("the conversation's write after the long call went through, without CLAIM_MOVED", () => {
      const progress = resultOf("toolu_progress");
      assert.ok(progress, diagnosis());
      assert.equal(progress.isError, false, progress.text);
      assert.doesNotMatch(progress.text, /CLAIM_MOVED/);
    });
  });
}
