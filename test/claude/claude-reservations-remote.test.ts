import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import { type FakeAnthropic, startFakeAnthropic, toolResults } from "./fake-anthropic.js";

/**
 * File reservations enforced in the real Claude Code in a checkout pointed at `arbeit serve`:
 * another session reserved `login.ts` exclusively on the service; the conversation's Edit of it
 * is denied by the PreToolUse hook, whose check went to the service as one POST /api/hook, and
 * the file is left as it was.
 */

const cannotRun = requirement("the real-Claude-Code reservations run against arbeit serve", claudeMissing());
const ORIGINAL = "export const form = {};\n";

describe("Claude Code, real binary, pointed at arbeit serve: another session's reservation denies the Edit", {
  skip: cannotRun,
  timeout: 300_000,
}, () => {
  let server: UiProject;
  let service: Service;
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let run: ClaudeRun;
  let token: string;

  const direct = async (args: string[]) => {
    const result = await runCli(args, { cwd: server.dir, env: server.env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };

  before(async () => {
    server = await uiProject("sqlite");
    token = await makeToken(server, ["--agent", "claude-laptop"]);
    service = await startService(server);
    const held = (await direct(["task", "create", "Redesign the login form", "--json"])).task.id;
    await direct([
      "--session",
      "ses-bob-desk",
      "--agent",
      "bob",
      "call",
      "arbeit_task_claim",
      JSON.stringify({ task_id: held, paths: ["login.ts"] }),
    ]);

    sandbox = createSandbox();
    const project = sandbox.project;
    writeFileSync(join(project, "login.ts"), ORIGINAL);
    for (const args of [
      ["init", "--server", service.url, "--json"],
      ["setup", "claude", "--json"],
    ]) {
      const result = await runCli(args, { cwd: project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    }
    fake = await startFakeAnthropic((request) => {
      const done = toolResults(request);
      const file = join(project, "login.ts");
      const said = JSON.stringify(request.messages);
      if (said.includes("COME-BACK-PROMPT") && !said.includes("CAME-BACK")) return { text: "CAME-BACK" };
      if (!said.includes("EDIT-LOGIN-PROMPT")) return { text: "title" };
      if (!done.has("toolu_read")) return { tools: [{ id: "toolu_read", name: "Read", input: { file_path: file } }] };
      if (!done.has("toolu_edit"))
        return {
          tools: [
            { id: "toolu_edit", name: "Edit", input: { file_path: file, old_string: "{}", new_string: "{ a: 1 }" } },
          ],
        };
      return { text: "EDIT-DONE" };
    });
    run = await runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt: "EDIT-LOGIN-PROMPT: change the login form.",
      allowedTools: ["Read", "Edit", "mcp__arbeit"],
      env: { ARBEIT_TOKEN: token },
    });
  });

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
    await service?.stop("SIGKILL");
    await server?.close();
  });

  it("denies the Edit, naming the holder, and leaves the file untouched", () => {
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.result?.result, "EDIT-DONE", run.stdout.slice(-3000));
    const result = fake.requests
      .map((request) => toolResults(request).get("toolu_edit"))
      .find((found) => found !== undefined);
    assert.ok(result, "the Edit's result came back to the model");
    assert.equal(result.isError, true);
    assert.match(result.text, /login\.ts is reserved exclusively by bob \(session ses-bob-desk, task tkt-/);
    assert.equal(readFileSync(join(sandbox.project, "login.ts"), "utf8"), ORIGINAL);
  });

  it("asked the service, one POST /api/hook for the check, which the request log shows as a refusal", () => {
    assert.match(service.stderr(), /claude-laptop POST \/api\/hook pre-tool-use 200 edit_refused/, service.stderr());
  });

  it("recorded the refusal once: who, which file, whose reservation", async () => {
    const { events } = await direct([
      "call",
      "arbeit_query",
      JSON.stringify({ query: "events", params: { event_types: ["edit_refused"] } }),
    ]);
    assert.equal(events.length, 1, JSON.stringify(events));
    const [refused] = events;
    assert.deepEqual(
      [
        refused.session_id,
        refused.agent,
        refused.payload.path,
        refused.payload.holder.session,
        refused.payload.holder.agent,
      ],
      [run.sessionId, "claude-laptop", "login.ts", "ses-bob-desk", "bob"],
    );
    assert.match(refused.payload.token_id, /^tok-/);
  });

  it("tells the refused conversation, in its next step, that the file is free once bob's reservation ends", async () => {
    await direct([
      "--session",
      "ses-bob-desk",
      "--agent",
      "bob",
      "call",
      "arbeit_task_claim",
      JSON.stringify({ action: "release", paths: ["login.ts"] }),
    ]);
    const before = fake.requests.length;
    const next = await runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt: "COME-BACK-PROMPT: anything new?",
      resume: run.sessionId!,
      allowedTools: ["Read", "Edit", "mcp__arbeit"],
      env: { ARBEIT_TOKEN: token },
    });
    assert.equal(next.timedOut, false, next.stderr);
    assert.equal(next.result?.result, "CAME-BACK", next.stdout.slice(-3000));
    const seen = fake.requests.slice(before).map((request) => JSON.stringify(request.messages));
    assert.ok(
      seen.some((text) =>
        /login\.ts is free now \(was held by bob \(session ses-bob-desk, task tkt-[a-z0-9]{8}\)\)/.test(text),
      ),
      seen.join("\n").slice(-3000),
    );
  });
});
