import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { runCli } from "../helpers/cli.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import {
  ageAway,
  awayState,
  type BodyProxy,
  bodyProxy,
  type HungListener,
  hungListener,
  outboxLines,
} from "./away-harness.js";
import { type Checkout, checkout, closedPort } from "./harness.js";

/**
 * Claude Code's hooks (the real `arbeit hook` processes) in a checkout whose service cannot be
 * asked: stopped, behind a hung network, or too old to know a step. The agent is told once that
 * coordination is off; the edit check answers without the service (fail-open, or fail-closed when
 * the project says so); what the hooks record waits in the checkout and reaches the service, in
 * order and once, when it answers again; the service records the outage.
 */

const SESSION = "away-1";
const OTHER = "away-2";
const RETRY_WINDOW_MS = 30_000;

describe("Claude Code hooks when the service cannot be asked", () => {
  let project: UiProject;
  let service: Service;
  let port: number;
  let laptop: Checkout;
  let alice: string;
  let taskId: string;

  const direct = async (args: string[]) => {
    const result = await runCli(args, { cwd: project.dir, env: project.env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result;
  };
  const rows = async (table: string): Promise<any[]> =>
    (await direct(["export", "-"])).stdout
      .split("\n")
      .filter((line) => line.startsWith(`{"table":"${table}"`))
      .map((line) => JSON.parse(line).row);
  const events = async () => (await rows("events")).map((event) => ({ ...event, payload: JSON.parse(event.payload) }));
  const hook = async (
    name: string,
    event: string,
    fields: Record<string, unknown>,
    env: Record<string, string> = {},
    session = SESSION,
  ) => {
    const result = await runHook(name, hookPayload(laptop.dir, session, event, fields), laptop.dir, {
      ...laptop.env,
      ...env,
    });
    assert.equal(result.code, 0, result.stderr);
    return result;
  };
  const output = (stdout: string) => (stdout.trim() === "" ? {} : JSON.parse(stdout).hookSpecificOutput);
  const edit = (file: string) => ({
    tool_name: "Edit",
    tool_input: { file_path: join(laptop.dir, file), old_string: "a", new_string: "b" },
    tool_response: { success: true },
    tool_use_id: `toolu_${file}`,
  });
  const start = async () => {
    service = await startService(project, ["--port", String(port)]);
  };

  before(async () => {
    project = await uiProject("sqlite");
    alice = await makeToken(project, ["--agent", "alice"]);
    port = await closedPort();
    await start();
    laptop = checkout();
    assert.equal((await laptop.cli(["init", "--server", service.url, "--json"])).code, 0);
    assert.equal(
      (await laptop.cli(["login", service.url, "--token-stdin", "--json"], { input: `${alice}\n` })).code,
      0,
    );
    mkdirSync(join(laptop.dir, "src"));
    taskId = (await laptop.cli(["task", "create", "Fix the login bug", "--json"])).json.data.task.id;
    assert.equal((await laptop.cli(["task", "start-work", taskId, "--session", SESSION, "--json"])).code, 0);
    const held = (await direct(["task", "create", "Redesign the form", "--json"])).json.data.task.id;
    await direct([
      "--session",
      "ses-bob",
      "--agent",
      "bob",
      "call",
      "arbeit_task_claim",
      JSON.stringify({ task_id: held, paths: ["src/held.ts"] }),
    ]);
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
    laptop?.close();
  });

  it("with the service stopped: the agent is told once, edits go unchecked (or refused when the project fails closed), records wait in the checkout", async () => {
    // While it answers, another session's file is refused.
    const denied = await hook("pre-tool-use", "PreToolUse", edit("src/held.ts"));
    assert.equal(output(denied.stdout).permissionDecision, "deny");
    await service.stop();

    const touched = await hook("post-tool-use", "PostToolUse", edit("src/app.ts"));
    assert.match(
      output(touched.stdout).additionalContext,
      /coordination is OFF since .*cannot be asked.*not recorded on the service/s,
    );
    assert.equal(output(touched.stdout).hookEventName, "PostToolUse");
    assert.match(touched.stderr, /kept in \.arbeit\/outbox\.jsonl/);
    assert.deepEqual(
      outboxLines(laptop.dir).map((entry) => [entry.hook, entry.session, entry.input.touch?.path]),
      [["post-tool-use", SESSION, "src/app.ts"]],
    );

    // Told once: this session's next hooks say nothing more; the held file's edit is let through.
    const unchecked = await hook("pre-tool-use", "PreToolUse", edit("src/held.ts"));
    assert.equal(unchecked.stdout, "");
    // Another session of the same checkout is told at its own first hook, the edit check's included.
    const other = await hook("pre-tool-use", "PreToolUse", edit("src/held.ts"), {}, OTHER);
    assert.equal(output(other.stdout).permissionDecision, undefined);
    assert.match(output(other.stdout).additionalContext, /coordination is OFF/);

    // A project that fails closed refuses the edit while the service cannot check it.
    const serviceFile = join(laptop.dir, ".arbeit", "service.json");
    const committed = readFileSync(serviceFile, "utf8");
    writeFileSync(serviceFile, JSON.stringify({ ...JSON.parse(committed), edit_check: "fail-closed" }));
    const closed = await hook("pre-tool-use", "PreToolUse", edit("src/app.ts"));
    assert.equal(output(closed.stdout).permissionDecision, "deny");
    assert.match(output(closed.stdout).permissionDecisionReason, /coordination is OFF.*refused until it answers/s);
    writeFileSync(serviceFile, committed);

    await hook("session-end", "SessionEnd", { reason: "other" });
    assert.deepEqual(
      outboxLines(laptop.dir).map((entry) => entry.hook),
      ["post-tool-use", "session-end"],
    );
    assert.deepEqual(
      awayState(laptop.dir).away.unchecked_edits.map((e: any) => [e.session, e.paths, e.decision]),
      [
        [SESSION, ["src/held.ts"], "allowed"],
        [OTHER, ["src/held.ts"], "allowed"],
        [SESSION, ["src/app.ts"], "denied"],
      ],
    );
  });

  it("when the service answers again, what waited is delivered in order and once, the outage is recorded, and the agent told", async () => {
    await start();
    ageAway(laptop.dir, RETRY_WINDOW_MS);
    const back = await hook("user-prompt-submit", "UserPromptSubmit", { prompt: "Go on" });
    assert.match(
      output(back.stdout).additionalContext,
      /coordination is back.*2 record\(s\) kept meanwhile were delivered/s,
    );
    assert.equal(existsSync(join(laptop.dir, ".arbeit", "outbox.jsonl")), false);
    assert.equal(existsSync(join(laptop.dir, ".arbeit", "outbox.delivering.jsonl")), false);
    assert.deepEqual(awayState(laptop.dir).away, undefined);

    const log = (await events()).filter(
      (event) => event.session_id === SESSION || event.event_type === "client_cut_off",
    );
    const order = log.map((event) => event.event_type);
    const tracked = order.indexOf("file_tracked");
    const stopped = order.indexOf("work_stopped");
    const cutOff = order.indexOf("client_cut_off");
    const prompt = order.indexOf("prompt_submitted");
    assert.ok(tracked >= 0 && tracked < stopped && stopped < cutOff && cutOff < prompt, order.join(" "));
    assert.equal(order.filter((type) => type === "file_tracked").length, 1);
    const report = log[cutOff];
    assert.equal(report.agent, "alice");
    assert.equal(report.payload.delivered, 2);
    assert.equal(report.payload.cause, "service_unreachable");
    assert.deepEqual(
      report.payload.unchecked_edits.map((e: any) => e.decision),
      ["allowed", "allowed", "denied"],
    );
    // Told once: the next hook says nothing of it.
    const next = await hook("user-prompt-submit", "UserPromptSubmit", { prompt: "And then" });
    assert.doesNotMatch(next.stdout, /coordination/);
  });

  describe("behind a hung network", () => {
    let hung: HungListener;
    before(async () => {
      hung = await hungListener();
    });
    after(() => hung?.close());

    it("the first hook gives up after the edit check's timeout, and the hooks after it do not try the network again", async () => {
      // The session ended above: it works on the task again, so that its files are recorded.
      assert.equal((await laptop.cli(["task", "start-work", taskId, "--session", SESSION, "--json"])).code, 0);
      const env = { ARBEIT_URL: hung.url, ARBEIT_TOKEN: alice };
      const first = await hook("pre-tool-use", "PreToolUse", edit("src/held.ts"), env);
      assert.equal(hung.connections, 1);
      assert.match(output(first.stdout).additionalContext, /coordination is OFF.*did not answer within 0.6 s/s);
      assert.equal(awayState(laptop.dir).away.cause, "service_timeout");
      const second = await hook("post-tool-use", "PostToolUse", edit("src/hung.ts"), env);
      const third = await hook("pre-tool-use", "PreToolUse", edit("src/held.ts"), env);
      assert.equal(hung.connections, 1, "no hook within the window tried the network");
      assert.equal(second.stdout, "");
      assert.equal(third.stdout, "");
      assert.deepEqual(
        outboxLines(laptop.dir).map((entry) => entry.input.touch.path),
        ["src/hung.ts"],
      );

      // The service itself answers: delivered.
      ageAway(laptop.dir, RETRY_WINDOW_MS);
      await hook("user-prompt-submit", "UserPromptSubmit", { prompt: "Back" });
      assert.equal(outboxLines(laptop.dir).length, 0);
      assert.ok((await rows("file_associations")).some((row) => row.file_path === "src/hung.ts"));
    });
  });

  describe("an answer lost on its way back", () => {
    let proxy: BodyProxy;
    before(async () => {
      proxy = await bodyProxy(service.url, (body) => body);
      proxy.mode = "swallow";
    });
    after(() => proxy?.close());

    it("the step the service applied is not applied again when the outbox delivers it", async () => {
      const env = { ARBEIT_URL: proxy.url, ARBEIT_TOKEN: alice };
      // Each run of this step logs the prompt again.
      const lost = await hook("user-prompt-submit", "UserPromptSubmit", { prompt: "The answer got lost" }, env);
      assert.match(lost.stderr, /did not answer within 4 s/);
      const [kept] = outboxLines(laptop.dir);
      assert.equal(kept.id, JSON.parse(proxy.bodies[0]!).id, "the outbox keeps the id the first try carried");
      ageAway(laptop.dir, RETRY_WINDOW_MS);
      await hook("post-tool-use", "PostToolUse", edit("src/once.ts"));
      assert.equal(outboxLines(laptop.dir).length, 0);
      const logged = (await events()).filter(
        (event) => event.event_type === "prompt_submitted" && event.payload.prompt === "The answer got lost",
      );
      assert.equal(logged.length, 1);
    });
  });

  describe("a service that does not know a step", () => {
    let proxy: BodyProxy;
    before(async () => {
      // A client newer than the service: its post-tool-use step is one the service never heard of.
      proxy = await bodyProxy(service.url, (body) =>
        body.replace('"hook":"post-tool-use"', '"hook":"post-tool-use-v9"'),
      );
    });
    after(() => proxy?.close());

    it("refuses it with 400: the agent is told, the record is set aside, and the other steps go on", async () => {
      const env = { ARBEIT_URL: proxy.url, ARBEIT_TOKEN: alice };
      const refused = await hook("post-tool-use", "PostToolUse", edit("src/new.ts"), env);
      assert.match(
        output(refused.stdout).additionalContext,
        /refused the post-tool-use step \(HTTP 400: There is no hook step named "post-tool-use-v9"/,
      );
      assert.deepEqual(
        outboxLines(laptop.dir, "outbox-refused.jsonl").map((entry) => [
          entry.hook,
          entry.input.touch.path,
          entry.error.code,
        ]),
        [["post-tool-use", "src/new.ts", "INVALID_ARGUMENT"]],
      );
      assert.equal(awayState(laptop.dir).away, undefined, "the service answers: coordination is not off");
      const prompt = await hook("user-prompt-submit", "UserPromptSubmit", { prompt: "Still here" }, env);
      assert.doesNotMatch(prompt.stdout, /refused/);
    });
  });
});
