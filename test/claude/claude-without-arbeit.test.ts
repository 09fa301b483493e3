import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { installArbeitInto } from "../helpers/install.js";
import { requirement } from "../helpers/requirements.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import { type FakeAnthropic, startFakeAnthropic, toolNames, toolResults } from "./fake-anthropic.js";

/**
 * A teammate's clone: the committed .claude/settings.json and .mcp.json that `arbeit setup
 * claude` wrote, and no node_modules yet. The real Claude Code runs every hook on every prompt
 * and tool call; none may fail or say anything.
 */

const cannotRun = requirement("the real-Claude-Code run without Arbeit installed", claudeMissing());

describe("Claude Code, real binary, in a clone where Arbeit is not installed", {
  skip: cannotRun,
  timeout: 180_000,
}, () => {
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let run: ClaudeRun;

  before(async () => {
    sandbox = createSandbox();
    const project = sandbox.project;
    installArbeitInto(project);
    const setup = await runCli(["setup", "claude", "--json"], { cwd: project });
    assert.equal(setup.code, 0, setup.stderr);
    // What the teammate has: the committed files, nothing installed.
    rmSync(join(project, "node_modules"), { recursive: true });
    fake = await startFakeAnthropic((request) => {
      if (!toolNames(request).includes("Bash")) return { text: "title" };
      const done = toolResults(request);
      if (!done.has("toolu_ls")) return { tools: [{ id: "toolu_ls", name: "Bash", input: { command: "ls" } }] };
      if (!done.has("toolu_read")) {
        return { tools: [{ id: "toolu_read", name: "Read", input: { file_path: join(project, "package.json") } }] };
      }
      return { text: "CLONE-DONE" };
    });
    run = await runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt: "List the files, then read package.json.",
      allowedTools: ["Bash", "Read"],
    });
  });

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
  });

  it("runs to the end, every Arbeit hook answering exit 0 with no output", () => {
    assert.equal(run.result?.result, "CLONE-DONE", run.stderr);
    const responses = run.events.filter((event) => event.subtype === "hook_response");
    const events = new Set(responses.map((event) => event.hook_event));
    for (const event of ["SessionStart", "UserPromptSubmit", "PostToolUse"]) {
      assert.ok(events.has(event), `a ${event} hook ran: ${[...events]}`);
    }
    assert.ok(responses.length >= 3, "hooks ran");
    for (const response of responses) {
      assert.deepEqual(
        [response.hook_name, response.exit_code, response.stdout, response.stderr],
        [response.hook_name, 0, "", ""],
      );
    }
  });
});
