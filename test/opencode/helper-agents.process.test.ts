import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
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
 * OpenCode's title and compaction agents call the model under the session's own id. With the real
 * binary (`opencode serve`, driven through its HTTP API): the session takes up a task, another
 * agent adds a note to it, the session is compacted on request (POST /session/{id}/summarize),
 * then prompted again. Neither helper agent is given the session's briefing or news in its system
 * prompt, and the news is not spent on the compaction agent: the session's next step, briefed
 * afresh after the compaction, is told what changed since it last looked.
 */

const REQUEST_MS = 150_000;
const START_MS = 90_000;
const SUMMARY = "SUMMARY-OF-HELPERS";
const NOTE = "The config moved to TOML";
const NEXT = "NEXT-STEP: anything new?";

const cannotRun = requirement("the real-opencode tests", hostMissing("opencode"));

const systemText = (request: ChatRequest) =>
  request.messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n");
const lastUserText = (request: ChatRequest) =>
  textOf(request.messages.filter((m) => m.role === "user").at(-1) ?? { role: "user" });

describe("OpenCode's title and compaction agents, real binary (opencode serve)", { skip: cannotRun }, () => {
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  let server: OpencodeServer;
  let taskId: string;
  /** How many model requests there were before the note was added, and before the next prompt. */
  let beforeNote = 0;
  let beforeNext = 0;

  before(async () => {
    sandbox = createSandbox();
    const project = sandbox.project;
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    writeFileSync(
      join(project, "opencode.json"),
      JSON.stringify(opencodeConfig({ plugin: ["./node_modules/arbeit"] })),
    );
    const arbeit = async (args: string[]) => {
      const result = await runCli(args, { cwd: project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
      return result.json;
    };
    await arbeit(["init"]);
    taskId = (await arbeit(["task", "create", "Load the config", "--json"])).data.task.id;

    model = await startFakeModel((request): Reply => {
      if (!request.tools?.length) {
        return systemText(request).includes("You are a title generator.")
          ? { text: "Loading the config" }
          : { text: `${SUMMARY}: the session works on ${taskId}.` };
      }
      if (lastUserText(request).includes(NEXT)) return { text: "Noted." };
      if (!toolHistory(request).some((call) => call.name === "arbeit_task_start_work"))
        return { tool: "arbeit_task_start_work", args: { task_id: taskId } };
      return { text: "Started." };
    });
    server = await startOpencodeServer(sandbox, { port: model.port, startMs: START_MS });
    const late = (what: string) => () => `${what} took over ${REQUEST_MS} ms\n${server.output()}`;
    const session = (await server.request("POST", "/session", {})).id as string;
    const prompt = (text: string) =>
      within(
        server.request("POST", `/session/${session}/message`, { parts: [{ type: "text", text }] }),
        REQUEST_MS,
        late(text),
      );
    await prompt("Load the config");
    beforeNote = model.requests.length;
    // Another agent adds a note to the task the session works on: news for the session's next step.
    const note = { task_id: taskId, type: "note", content: NOTE };
    await arbeit(["call", "arbeit_context_add", JSON.stringify(note), "--agent", "reviewer"]);
    await within(
      server.request("POST", `/session/${session}/summarize`, { providerID: "fake", modelID: "scripted" }),
      REQUEST_MS,
      late("compaction"),
    );
    beforeNext = model.requests.length;
    await prompt(NEXT);
    await server.stop();
  });

  after(async () => {
    await server?.stop();
    await model?.close();
    sandbox?.cleanup();
  });

  it("gives the title agent none of the briefing the session's own steps get", () => {
    assert.deepEqual(model.errors, []);
    const title = model.requests.find((r) => systemText(r).includes("You are a title generator."));
    const step = model.requests.find((r) => r.tools?.length);
    assert.ok(title && step, "a title request and a step");
    assert.match(systemText(step), /Arbeit task memory is set up in this project/);
    assert.doesNotMatch(systemText(title), /Arbeit/);
  });

  it("gives the compaction agent neither the briefing nor the news in its system prompt", () => {
    const compaction = model.requests
      .slice(beforeNote, beforeNext)
      .find((r) => systemText(r).includes("You are a context summarization agent."));
    assert.ok(compaction, `no compaction request among ${beforeNext - beforeNote} after the note`);
    assert.doesNotMatch(systemText(compaction), /Arbeit/);
    // What it is told of the task comes through the compaction hook, in its instructions.
    assert.match(textOf(compaction.messages.at(-1)!), /Arbeit: this session is working on/);
  });

  it("tells the session's next step the news, once: the compaction agent did not spend it", () => {
    // After a compaction the session is briefed afresh; the briefing lists what changed since it
    // last looked, which the compaction agent, had it been told, would have marked as seen.
    const told = model.requests.filter((r) => systemText(r).includes(`- reviewer added a note to ${taskId}: ${NOTE}`));
    assert.equal(told.length, 1, `${told.length} requests carried the news`);
    assert.ok(model.requests.indexOf(told[0]!) >= beforeNext, "the news reached a request before the next prompt");
    assert.ok(told[0]!.tools?.length, "the news reached a helper agent");
    assert.equal(lastUserText(told[0]!), NEXT);
  });
});
