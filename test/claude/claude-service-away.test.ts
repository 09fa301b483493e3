import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { ageAway, awayState, outboxLines } from "../remote/away-harness.js";
import { closedPort } from "../remote/harness.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import { type FakeAnthropic, startFakeAnthropic, textOf, toolResults } from "./fake-anthropic.js";

/**
 * The real Claude Code, headless with a scripted model, in a checkout whose `arbeit serve` is
 * stopped: the model is told that coordination is off; an Edit of a file another session reserved
 * goes through unchecked (fail-open), or is denied when the project's service file says
 * fail-closed; what the hooks record waits in the checkout and reaches the service, once, in the
 * first run after it is back, whose model is told so; the service records the outage.
 */

const cannotRun = requirement("the real-Claude-Code run against a stopped arbeit serve", claudeMissing());
const ORIGINAL = "export const form = {};\n";
const RETRY_WINDOW_MS = 30_000;

describe("Claude Code, real binary, when its arbeit serve is stopped", { skip: cannotRun, timeout: 400_000 }, () => {
  let server: UiProject;
  let service: Service;
  let port: number;
  let token: string;
  let sandbox: ClaudeSandbox;
  let fake: FakeAnthropic;
  let open: ClaudeRun;
  let closed: ClaudeRun;
  let back: ClaudeRun;

  const direct = async (args: string[]) => {
    const result = await runCli(args, { cwd: server.dir, env: server.env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };
  const eventsOf = async (type: string): Promise<any[]> =>
    (await direct(["call", "arbeit_query", JSON.stringify({ query: "events", params: { event_types: [type] } })]))
      .events;
  /** Everything the model was shown, as one text. */
  const seen = () => fake.requests.map((request) => JSON.stringify(request.body ?? request)).join("\n");
  const run = (prompt: string, resume?: string) =>
    runClaude({
      sandbox,
      baseUrl: fake.baseUrl,
      prompt,
      allowedTools: ["Read", "Edit"],
      env: { ARBEIT_TOKEN: token },
      ...(resume ? { resume } : {}),
    });

  before(async () => {
    server = await uiProject("sqlite");
    token = await makeToken(server, ["--agent", "claude-laptop"]);
    port = await closedPort();
    service = await startService(server, ["--port", String(port)]);
    const held = (await direct(["task", "create", "Redesign the login form", "--json"])).task.id;
    await direct([
      "--session",
      "ses-bob",
      "--agent",
      "bob",
      "call",
      "arbeit_task_claim",
      JSON.stringify({ task_id: held, paths: ["login.ts"] }),
    ]);

    sandbox = createSandbox();
    writeFileSync(join(sandbox.project, "login.ts"), ORIGINAL);
    for (const args of [
      ["init", "--server", service.url, "--json"],
      ["setup", "claude", "--json"],
    ]) {
      const result = await runCli(args, { cwd: sandbox.project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    }
    fake = await startFakeAnthropic((request) => {
      const done = toolResults(request);
      const file = join(sandbox.project, "login.ts");
      const text = JSON.stringify(request.messages);
      const marker = ["BACK-RUN", "CLOSED-RUN", "OPEN-RUN"].find((m) => text.includes(m));
      if (!marker) return { text: "title" };
      if (marker === "BACK-RUN") return { text: "BACK-DONE" };
      const read = `toolu_read_${marker}`;
      if (!done.has(read)) return { tools: [{ id: read, name: "Read", input: { file_path: file } }] };
      const id = `toolu_edit_${marker}`;
      if (!done.has(id))
        return {
          tools: [
            {
              id,
              name: "Edit",
              input: {
                file_path: file,
                old_string: marker === "OPEN-RUN" ? "{}" : "{ open: 1 }",
                new_string: `{ ${marker.slice(0, 4).toLowerCase()}: 1 }`,
              },
            },
          ],
        };
      return { text: `${marker}-DONE` };
    });
    await service.stop();
    open = await run("OPEN-RUN: change the login form.");
    const serviceFile = join(sandbox.project, ".arbeit", "service.json");
    const committed = readFileSync(serviceFile, "utf8");
    writeFileSync(serviceFile, JSON.stringify({ ...JSON.parse(committed), edit_check: "fail-closed" }));
    closed = await run("CLOSED-RUN: change the login form again.");
    writeFileSync(serviceFile, committed);
    service = await startService(server, ["--port", String(port)]);
    ageAway(sandbox.project, RETRY_WINDOW_MS);
    // The conversation that was told coordination is off goes on: it is told that it is back.
    back = await run("BACK-RUN: anything new?", open.sessionId);
  });

  after(async () => {
    await fake?.close();
    sandbox?.cleanup();
    await service?.stop("SIGKILL");
    await server?.close();
  });

  it("tells the model that coordination is off, and lets the Edit of the reserved file through (fail-open)", () => {
    assert.equal(open.timedOut, false, open.stderr);
    assert.equal(open.result?.result, "OPEN-RUN-DONE", open.stdout.slice(-3000));
    assert.match(seen(), /coordination is OFF since/);
    const result = fake.requests.map((r) => toolResults(r).get("toolu_edit_OPEN-RUN")).find((found) => found);
    assert.equal(result?.isError, false, result?.text);
  });

  it("denies the Edit while the service cannot be asked when the project fails closed", () => {
    assert.equal(closed.result?.result, "CLOSED-RUN-DONE", closed.stdout.slice(-3000));
    const result = fake.requests.map((r) => toolResults(r).get("toolu_edit_CLOSED-RUN")).find((found) => found);
    assert.equal(result?.isError, true, result?.text);
    assert.match(result!.text, /coordination is OFF.*refused until it answers/s);
    assert.doesNotMatch(readFileSync(join(sandbox.project, "login.ts"), "utf8"), /clos/);
  });

  it("delivers what both runs recorded, once each, when the service is back, and tells the resumed conversation", async () => {
    assert.equal(back.result?.result, "BACK-DONE", back.stdout.slice(-3000));
    assert.match(seen(), /coordination is back/);
    assert.deepEqual(outboxLines(sandbox.project), []);
    assert.equal(awayState(sandbox.project).away, undefined);
    const prompts = (await eventsOf("prompt_submitted")).map((event) => [event.session_id, event.payload.prompt]);
    assert.deepEqual(
      prompts.filter(([, prompt]) => !prompt.startsWith("BACK-RUN")),
      [
        [open.sessionId, "OPEN-RUN: change the login form."],
        [closed.sessionId, "CLOSED-RUN: change the login form again."],
      ],
    );
  });

  it("records the outage on the service, with the edits checked by nobody", async () => {
    const [cutOff, ...more] = await eventsOf("client_cut_off");
    assert.equal(more.length, 0);
    assert.equal(cutOff.agent, "claude-laptop");
    assert.deepEqual(
      cutOff.payload.unchecked_edits.map((edit: any) => [edit.session, edit.paths, edit.decision]),
      [
        [open.sessionId, ["login.ts"], "allowed"],
        [closed.sessionId, ["login.ts"], "denied"],
      ],
    );
    assert.ok(cutOff.payload.delivered >= 4, JSON.stringify(cutOff.payload));
  });
});
