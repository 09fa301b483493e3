import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { releaseCopy } from "../helpers/release-copy.js";
import { requirement } from "../helpers/requirements.js";
import { makeToken, RELEASE, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import { type FakeAnthropic, startFakeAnthropic, textOf } from "./fake-anthropic.js";

/**
 * The real Claude Code in a checkout set up by an Arbeit release the service does not serve (a
 * copy of this build stating 0.0.9, test/helpers/release-copy.ts): its hooks are refused with
 * VERSION_UNSUPPORTED, and the refusal is shown (a hook's systemMessage) and told to the model,
 * not passed over.
 */

const cannotRun = requirement("the real-Claude-Code run of an old release against arbeit serve", claudeMissing());
const OLD = "0.0.9";

describe("Claude Code, real binary, whose Arbeit release the service refuses", {
  skip: cannotRun,
  timeout: 300_000,
}, () => {
  let server: UiProject;
  let service: Service;
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let run: ClaudeRun;
  const older = releaseCopy(OLD);
  const diagnosis = () => `${run.stderr}\n${run.stdout.slice(-3000)}\nservice log:\n${service.stderr()}`;

  before(async () => {
    server = await uiProject("sqlite");
    const token = await makeToken(server, ["--agent", "old-laptop"]);
    service = await startService(server);
    sandbox = createSandbox();
    // The old release sets the checkout up, so Claude Code's hooks run it.
    for (const args of [
      ["init", "--server", service.url, "--json"],
      ["setup", "claude", "--json"],
    ]) {
      const result = await runCli(args, { cwd: sandbox.project, env: { HOME: sandbox.home }, cli: older.cli });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    }
    fake = await startFakeAnthropic(() => ({ text: "OLD-RELEASE-DONE" }));
    run = await runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt: "Carry on.",
      allowedTools: ["Read"],
      env: { ARBEIT_TOKEN: token },
    });
  });

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
    await service?.stop("SIGKILL");
    await server?.close();
    older.cleanup();
  });

  it("the conversation still runs to its end", () => {
    assert.equal(run.timedOut, false, diagnosis());
    assert.equal(run.result?.result, "OLD-RELEASE-DONE", diagnosis());
  });

  it("each hook answers Claude Code with the refusal for the person (systemMessage), naming both releases, and exits 0", () => {
    const answers = run.events.filter((event) => event.type === "system" && event.subtype === "hook_response");
    const refused = new RegExp(
      `^Arbeit: the service refused the [a-z-]+ hook: .*release ${RELEASE.replaceAll(".", "\\.")}.*release ${OLD.replaceAll(".", "\\.")}\\.`,
    );
    for (const event of ["SessionStart", "UserPromptSubmit"]) {
      const answer = answers.find((candidate) => candidate.hook_event === event);
      assert.ok(answer, `${event} answered: ${diagnosis()}`);
      assert.equal(answer.exit_code, 0);
      assert.match(JSON.parse(answer.stdout).systemMessage, refused);
    }
  });

  it("the model is told that Arbeit's hooks record nothing until someone upgrades", () => {
    const first = fake.requests.at(-1)!;
    const text = first.messages.map((message) => textOf(message.content)).join("\n");
    assert.match(text, /Arbeit's hooks record nothing for this session/, diagnosis());
    assert.match(text, new RegExp(`this client is release ${OLD.replaceAll(".", "\\.")}`));
  });

  it("the service refused each hook by name and wrote nothing", () => {
    const log = service.stderr();
    assert.match(log, /POST \/api\/hook - 400 VERSION_UNSUPPORTED/, log);
    assert.doesNotMatch(log, /POST \/api\/hook \S+ 200/, log);
  });
});
