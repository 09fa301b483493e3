import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openProject } from "../../src/service/project.js";
import { TOOL_NAMES } from "../../src/tools/catalogue.js";
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
 * The real OpenCode binary (installed on demand, test/helpers/hosts.ts), headless, in a hermetic HOME, driven by
 * a scripted model; the plugin is loaded exactly as a user would load it. Each run takes 10-30 s.
 */

const RUN_TIMEOUT_MS = 150_000;
const BRIEFING = "Arbeit: this session is working on";
const SUBAGENT = "ARBEIT-SUBAGENT";
const SUMMARY = "SUMMARY-MARKER";

const cannotRun = requirement("the real-opencode tests", hostMissing("opencode"));

const allText = (request: ChatRequest) => request.messages.map(textOf).join("\n");
/** The system messages' text: the plugin's briefing and news are in it. */
const systemText = (request: ChatRequest) =>
  request.messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n");

/** A project holding Arbeit the way a user installs it: node_modules/arbeit (here, this repo). */
function newProject(): OpencodeSandbox {
  const sandbox = createSandbox();
  mkdirSync(join(sandbox.project, "node_modules"));
  symlinkSync(REPO, join(sandbox.project, "node_modules", "arbeit"), "dir");
  return sandbox;
}

async function arbeit(sandbox: OpencodeSandbox, args: string[]): Promise<any> {
  const result = await runCli(args, { cwd: sandbox.project, env: { HOME: sandbox.home } });
  assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
  return result.json;
}

function assertRan(run: OpencodeRun, model: FakeModel): void {
  assert.equal(run.timedOut, false, `opencode did not finish within ${RUN_TIMEOUT_MS} ms\n${run.stderr}`);
  assert.equal(run.code, 0, `opencode exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-2000)}`);
  assert.deepEqual(model.errors, []);
}

describe("OpenCode, real binary, scripted model", { skip: cannotRun }, () => {
  describe("local plugin file written by `arbeit setup opencode`", () => {
    let sandbox: OpencodeSandbox;
    let model: FakeModel;
    let run: OpencodeRun;
    let setup: any;

    before(async () => {
      sandbox = newProject();
      const project = sandbox.project;
      writeFileSync(join(project, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
      // The project's .opencode/ is a config dir too: seed it so OpenCode installs nothing.
      seedConfigDir(join(project, ".opencode"));
      mkdirSync(join(project, "notes"));
      writeFileSync(join(project, "notes", "sub.txt"), "notes for the subagent\n");
      setup = await arbeit(sandbox, ["setup", "opencode", "--json"]);

      const hello = join(project, "src", "hello.txt");
      model = await startFakeModel((request): Reply => {
        if (!request.tools?.length) {
          // The title agent, or the compaction agent (which must have been given the briefing).
          return allText(request).includes(BRIEFING)
            ? { text: `${SUMMARY}: greeting module under way.` }
            : { text: "Greeting module" };
        }
        const calls = toolHistory(request);
        const called = (name: string) => calls.some((call) => call.name === name);
        if (textOf(request.messages.find((m) => m.role === "user") ?? { role: "user" }).includes(SUBAGENT)) {
          return called("read")
            ? { text: "Read it." }
            : { tool: "read", args: { filePath: join(project, "notes", "sub.txt") } };
        }
        if (allText(request).includes(SUMMARY)) return { text: "All done." };
        const created = calls.find((call) => call.name === "arbeit_task_create");
        const taskId = created ? JSON.parse(created.result).data.task.id : undefined;
        if (!created) return { tool: "arbeit_task_create", args: { title: "Greeting module" } };
        if (!called("arbeit_task_start_work")) return { tool: "arbeit_task_start_work", args: { task_id: taskId } };
        // A relative path for write (OpenCode resolves it against the project), absolute for the rest.
        if (!called("write")) return { tool: "write", args: { filePath: "src/hello.txt", content: "hello\n" } };
        if (!called("edit"))
          return { tool: "edit", args: { filePath: hello, oldString: "hello", newString: "hello world" } };
        if (!called("read")) return { tool: "read", args: { filePath: hello } };
        if (!called("task")) {
          return {
            tool: "task",
            args: {
              description: "Read the notes",
              prompt: `${SUBAGENT}: read notes/sub.txt`,
              subagent_type: "general",
            },
          };
        }
        if (!called("arbeit_context_add")) {
          // Reporting a nearly full window makes OpenCode compact before the next step.
          return {
            tool: "arbeit_context_add",
            args: { task_id: taskId, type: "decision", content: "Greet the whole world" },
            promptTokens: 99_000,
          };
        }
        return { text: "All done." };
      });
      run = await runOpencode(sandbox, "Build the greeting module", { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
    });

    after(async () => {
      await model?.close();
      sandbox?.cleanup();
    });

    it("setup wrote a plugin file that imports the installed package by name", () => {
      assert.equal(setup.success, true);
      const source = readFileSync(join(sandbox.project, ".opencode", "plugin", "arbeit.js"), "utf8");
      assert.match(source, /export \{ default \} from "arbeit\/opencode";/);
    });

    it("runs to the end, every tool call completing", () => {
      assertRan(run, model);
      const uses = run.events.filter((event) => event.type === "tool_use");
      const tools = uses.map((event) => event.part.tool);
      for (const tool of ["arbeit_task_create", "arbeit_task_start_work", "write", "edit", "read", "task"]) {
        assert.ok(tools.includes(tool), `${tool} was not called: ${tools.join(", ")}`);
      }
      for (const use of uses) assert.equal(use.part.state.status, "completed", JSON.stringify(use.part.state));
      const arbeitOutputs = uses
        .filter((use) => use.part.tool.startsWith("arbeit_"))
        .map((use) => use.part.state.output);
      for (const output of arbeitOutputs) assert.equal(JSON.parse(output).success, true, output);
    });

    it("registers every catalogue tool under its own name, with its full JSON schema, never shadowing task or todowrite", () => {
      const request = model.requests.find((r) => r.tools?.some((tool) => tool.function.name === "arbeit_task_create"));
      assert.ok(request, "no request offered the arbeit tools");
      const names = request.tools!.map((tool) => tool.function.name);
      for (const name of TOOL_NAMES) assert.ok(names.includes(name), `${name} missing from ${names.join(", ")}`);
      assert.equal(names.filter((name) => name === "task").length, 1);
      const task = request.tools!.find((tool) => tool.function.name === "task")!;
      assert.doesNotMatch(task.function.description ?? "", /arbeit/i);
      const params = (name: string) => request.tools!.find((tool) => tool.function.name === name)!.function.parameters;
      assert.deepEqual(params("arbeit_task_create").required, ["title"]);
      assert.equal(params("arbeit_task_create").properties.title.maxLength, 500);
      assert.equal(params("arbeit_task_start_work").properties.task_id.pattern, "^tkt-[a-z0-9]{8}$");
    });

    it("records the task, OpenCode's session, the files read and written, and the events", async () => {
      assertRan(run, model);
      const session = run.events[0].sessionID as string;
      assert.match(session, /^ses_/);
      const service = await openProject({ cwd: sandbox.project });
      try {
        const { data: list } = await service.query({ query: "tasks", params: {} }, { session: null, agent: null });
        const [summary] = (list as any).tasks;
        assert.equal(summary.title, "Greeting module");
        const { data } = await service.getTask({ task_id: summary.id, include: ["sessions", "context", "files"] });
        assert.equal(data.task.status, "in_progress");
        assert.deepEqual(
          data.sessions!.map((link) => [link.session_id, link.agent]),
          [[session, "build"]],
        );
        assert.deepEqual(
          data.context!.map((entry) => entry.content),
          ["Greet the whole world"],
        );
        const files = await service.store.read((tx) => tx.filesOf(summary.id));
        const rows = files.map((file) => `${file.file_path} ${file.operation} ${file.session_id}`).sort();
        // The subagent's read counts for the parent session's task (session.created parentID),
        // recorded as the subagent's own session.
        const child = files.find((file) => file.file_path === "notes/sub.txt")?.session_id;
        assert.ok(child?.startsWith("ses_") && child !== session, `a child session of its own: ${child}`);
        assert.deepEqual(rows, [
          `notes/sub.txt read ${child}`,
          `src/hello.txt read ${session}`,
          `src/hello.txt write ${session}`,
        ]);
        const events = await service.store.read((tx) => tx.listEvents({ after_seq: 0, limit: 100 }));
        const types = events.map((event) => event.event_type);
        for (const type of ["task_created", "work_started", "file_tracked", "context_added"] as const) {
          assert.ok(types.includes(type), `no ${type} event in ${types.join(", ")}`);
        }
        assert.equal(types.filter((type) => type === "file_tracked").length, 3);
        // Every event is the parent session's, but the subagent's file touch: that is its own.
        for (const event of events)
          assert.equal(event.session_id, event.payload.file_path === "notes/sub.txt" ? child : session);
        const trackedBy = events.filter((e) => e.event_type === "file_tracked").map((e) => e.agent);
        assert.deepEqual(trackedBy, ["build", "build", "general"]);
      } finally {
        await service.close();
      }
    });

    it("hands the active task's briefing to the compaction agent", () => {
      const compaction = model.requests.find((r) => !r.tools?.length && allText(r).includes(BRIEFING));
      assert.ok(compaction, "no compaction request carried the Arbeit briefing");
      const text = allText(compaction);
      assert.match(text, /\[in_progress\] Greeting module/);
      assert.match(text, /- decision: Greet the whole world/);
      assert.match(text, /src\/hello\.txt \(read, write\)/);
      // After compaction the run carried on from the summary and finished.
      assert.ok(model.requests.some((r) => allText(r).includes(SUMMARY)));
    });

    it("gives the title and compaction agents, which share the session's id, neither its briefing nor its news", () => {
      const helpers = model.requests.filter((r) => !r.tools?.length);
      const title = helpers.find((r) => !allText(r).includes(BRIEFING));
      const compaction = helpers.find((r) => allText(r).includes(BRIEFING));
      assert.ok(title && compaction, `${helpers.length} requests without tools`);
      for (const r of [title, compaction]) {
        assert.doesNotMatch(systemText(r), /Arbeit: this session|No open tasks: plan new work|Arbeit news/);
      }
      assert.match(systemText(title), /You are a title generator\./);
      assert.match(systemText(compaction), /You are a context summarization agent\./);
    });

    it("briefs the session in its system prompt, afresh after the compaction, and each subagent on its own", () => {
      const steps = model.requests.filter((r) => r.tools?.length);
      const before = steps.filter((r) => !allText(r).includes(SUMMARY) && !allText(r).includes(SUBAGENT));
      const after = steps.filter((r) => allText(r).includes(SUMMARY));
      assert.ok(before.length > 0 && after.length > 0);
      // The session started with no task at all; once compacted it is briefed on the one it took up.
      for (const r of before) assert.match(systemText(r), /No open tasks: plan new work with arbeit_task_create\./);
      for (const r of after)
        assert.match(
          systemText(r),
          /Arbeit: this session is working on:\nTask tkt-[a-z0-9]{8} \[in_progress\] Greeting module/,
        );
      const subagent = steps.find((r) => allText(r).includes(SUBAGENT));
      assert.match(
        systemText(subagent!),
        /Arbeit: the session that started this one is working on:\nTask tkt-[a-z0-9]{8} \[in_progress\] Greeting module/,
      );
    });
  });

  describe("system prompt briefing, news at the next step, todo list mirrored", () => {
    let sandbox: OpencodeSandbox;
    let model: FakeModel;
    let run: OpencodeRun;
    let taskId: string;
    const READY = /Ready to start:\n- (tkt-[a-z0-9]{8}) "Parse the config"/;
    const NEWS = "Arbeit news since this session's last step: reviewer added a note to";
    const mainSteps = () => model.requests.filter((r) => r.tools?.length);

    before(async () => {
      sandbox = newProject();
      const project = sandbox.project;
      const config = opencodeConfig({ plugin: ["./node_modules/arbeit"] });
      writeFileSync(join(project, "opencode.json"), JSON.stringify(config, null, 2));
      await arbeit(sandbox, ["init"]);
      taskId = (await arbeit(sandbox, ["task", "create", "Parse the config", "--json"])).data.task.id;
      // A repository the agent commits to through the bash tool.
      const git = (...args: string[]) => execFileSync("git", args, { cwd: project, stdio: "pipe" });
      git("init", "-q");
      git("config", "user.email", "agent@example.com");
      git("config", "user.name", "Agent");
      writeFileSync(join(project, "config.toml"), "name = 'app'\n");
      model = await startFakeModel(async (request): Promise<Reply> => {
        if (!request.tools?.length) return { text: "Config parser" };
        const calls = toolHistory(request);
        const todowrites = calls.filter((call) => call.name === "todowrite").length;
        if (!calls.some((call) => call.name === "arbeit_task_start_work")) {
          // The task to work on comes from the briefing in the system prompt, nowhere else.
          const ready = READY.exec(systemText(request));
          return ready ? { tool: "arbeit_task_start_work", args: { task_id: ready[1] } } : { text: "No briefing." };
        }
        if (!calls.some((call) => call.name === "bash")) {
          return {
            tool: "bash",
            args: {
              command: "git add config.toml && git commit -m 'Add the config'",
              description: "Commit the config",
            },
          };
        }
        const todo = (read: string, write: string) => ({
          tool: "todowrite",
          args: {
            todos: [
              { content: "Read the config format", status: read, priority: "high" },
              { content: "Write the parser", status: write, priority: "medium" },
            ],
          },
        });
        if (todowrites === 0) return todo("in_progress", "pending");
        if (todowrites === 1) {
          // Another session adds a note to the task between two steps of this one.
          const service = await openProject({ cwd: project });
          try {
            await service.addContext(
              { task_id: taskId, type: "note", content: "The config moved to TOML" },
              { session: "ses_reviewer", agent: "reviewer" },
            );
          } finally {
            await service.close();
          }
          return todo("completed", "in_progress");
        }
        if (todowrites === 2) return todo("completed", "completed");
        return { text: "Parser done." };
      });
      run = await runOpencode(sandbox, "Parse the config", { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
    });

    after(async () => {
      await model?.close();
      sandbox?.cleanup();
    });

    it("briefs the session in its system prompt from its first step, the same text at every step", () => {
      assertRan(run, model);
      const steps = mainSteps();
      assert.ok(steps.length >= 5, `${steps.length} steps`);
      const [first] = steps.map(systemText);
      assert.match(first!, /Arbeit task memory is set up in this project \(arbeit_\* tools\)\./);
      assert.equal(READY.exec(first!)?.[1], taskId);
      const briefing = first!.slice(first!.indexOf("Arbeit task memory"));
      for (const step of steps) assert.ok(systemText(step).includes(briefing), "a step without the briefing");
      const started = run.events.find((e) => e.type === "tool_use" && e.part.tool === "arbeit_task_start_work");
      assert.equal(JSON.parse(started.part.state.output).success, true);
    });

    it("tells the next step, once, of the note another session added", () => {
      const withNews = mainSteps().filter((step) => systemText(step).includes(NEWS));
      assert.equal(withNews.length, 1, "the news should reach exactly one step");
      assert.match(systemText(withNews[0]!), new RegExp(`${NEWS} ${taskId}: The config moved to TOML`));
      // It came with the step right after the note, the one that completed the second todo.
      const calls = toolHistory(withNews[0]!).filter((call) => call.name === "todowrite");
      assert.equal(calls.length, 2);
    });

    it("records the commit the agent made through bash on the task it works on", async () => {
      const service = await openProject({ cwd: sandbox.project });
      try {
        const { data } = await service.getTask({ task_id: taskId, include: ["commits"] });
        assert.deepEqual(
          data.commits!.map((commit) => [commit.subject, commit.files]),
          [["Add the config", ["config.toml"]]],
        );
        const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: sandbox.project, encoding: "utf8" }).trim();
        assert.equal(data.commits![0]!.sha, head);
      } finally {
        await service.close();
      }
    });

    it("mirrors the todo list as the task's progress items, each once, completed as the todos were", async () => {
      const service = await openProject({ cwd: sandbox.project });
      try {
        const { data } = await service.getTask({ task_id: taskId, include: ["progress"] });
        assert.deepEqual(
          data.progress!.map((item) => [item.content, item.completed]),
          [
            ["Read the config format", true],
            ["Write the parser", true],
          ],
        );
        const events = await service.store.read((tx) => tx.listEvents({ after_seq: 0, task_id: taskId, limit: 100 }));
        const session = run.events[0].sessionID as string;
        for (const e of events.filter((e) => e.event_type.startsWith("progress_"))) {
          assert.deepEqual([e.session_id, e.agent], [session, "build"]);
        }
      } finally {
        await service.close();
      }
    });
  });

  describe("a person's answer to the session's question, told at its next step and never again", () => {
    let sandbox: OpencodeSandbox;
    let model: FakeModel;
    let taskId: string;
    let first: OpencodeRun;
    let again: OpencodeRun;
    /** The model's requests of each run. */
    let firstSteps: ChatRequest[];
    let againSteps: ChatRequest[];
    let answered = false;
    const QUESTION = "QUESTION-OC: YAML or TOML for the settings?";
    const ANSWER = "ANSWER-OC: TOML, like the rest.";
    const ANSWERED = "human:alice answered";
    const lastUser = (request: ChatRequest) => textOf(request.messages.filter((m) => m.role === "user").at(-1)!);

    before(async () => {
      sandbox = newProject();
      const project = sandbox.project;
      writeFileSync(
        join(project, "opencode.json"),
        JSON.stringify(opencodeConfig({ plugin: ["./node_modules/arbeit"] })),
      );
      writeFileSync(join(project, "settings.md"), "# settings\n");
      await arbeit(sandbox, ["init"]);
      taskId = (await arbeit(sandbox, ["task", "create", "Load the settings", "--json"])).data.task.id;
      model = await startFakeModel(async (request): Promise<Reply> => {
        if (!request.tools?.length) return { text: "Settings" };
        if (lastUser(request).includes("ASK-AGAIN")) return { text: "Nothing else." };
        const calls = toolHistory(request);
        const asked = calls.find((call) => call.name === "arbeit_context_add");
        if (!calls.some((call) => call.name === "arbeit_task_start_work")) {
          return { tool: "arbeit_task_start_work", args: { task_id: taskId } };
        }
        if (!asked)
          return { tool: "arbeit_context_add", args: { task_id: taskId, type: "blocker", content: QUESTION } };
        if (!calls.some((call) => call.name === "read")) {
          // A person answers from the CLI while the model works out its next step (a read).
          if (!answered) {
            answered = true;
            const blocker = JSON.parse(asked.result).data.entry.id;
            const answer = { task_id: taskId, type: "user_input", content: ANSWER, supersede_entry_id: blocker };
            await arbeit(sandbox, ["call", "arbeit_context_add", JSON.stringify(answer), "--agent", "human:alice"]);
          }
          return { tool: "read", args: { filePath: join(project, "settings.md") } };
        }
        return { text: "Read the settings." };
      });
      first = await runOpencode(sandbox, "Load the settings", { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
      firstSteps = model.requests.filter((r) => r.tools?.length);
      const session = first.events[0]?.sessionID as string;
      const from = model.requests.length;
      // The same session, a new prompt, a new OpenCode process (and plugin).
      again = await runOpencode(sandbox, "ASK-AGAIN: anything else?", {
        port: model.port,
        timeoutMs: RUN_TIMEOUT_MS,
        args: ["--session", session],
      });
      againSteps = model.requests.slice(from).filter((r) => r.tools?.length);
    });

    after(async () => {
      await model?.close();
      sandbox?.cleanup();
    });

    it("the step after the answer has it in its system prompt, with the question it answers", () => {
      assertRan(first, model);
      assert.ok(answered, "the person answered");
      const during = firstSteps.filter((step) => {
        const names = toolHistory(step).map((call) => call.name);
        return names.includes("arbeit_context_add") && !names.includes("read");
      });
      assert.equal(during.length, 1);
      assert.equal(systemText(during[0]!).includes(ANSWERED), false);
      const next = firstSteps.find((step) => toolHistory(step).some((call) => call.name === "read"));
      assert.ok(next, "a step after the read");
      assert.ok(
        systemText(next).includes(
          `Arbeit news since this session's last step: human:alice answered the question on ${taskId} ("${QUESTION}"): ${ANSWER}`,
        ),
        systemText(next),
      );
    });

    it("no other step of the run, nor of the next run in the same session, is told it again", () => {
      assertRan(again, model);
      assert.equal(again.events[0]?.sessionID, first.events[0]?.sessionID, "the same session");
      assert.ok(againSteps.length >= 1, "the next run asked the model");
      const told = [...firstSteps, ...againSteps].filter((step) => systemText(step).includes(ANSWERED));
      assert.equal(told.length, 1, told.map(systemText).join("\n---\n"));
    });
  });

  describe('package plugin listed in opencode.json ("plugin": [path to the package])', () => {
    let sandbox: OpencodeSandbox;
    let model: FakeModel;
    let run: OpencodeRun;

    before(async () => {
      sandbox = newProject();
      const project = sandbox.project;
      // A path spec makes OpenCode load the package the way it loads an installed npm plugin:
      // through package.json "exports"["./server"]. ("arbeit" alone would fetch it from npm.)
      const config = opencodeConfig({ plugin: ["./node_modules/arbeit"] });
      writeFileSync(join(project, "opencode.json"), JSON.stringify(config, null, 2));
      writeFileSync(join(project, "README.md"), "# demo\n");
      await arbeit(sandbox, ["init"]);
      model = await startFakeModel((request): Reply => {
        if (!request.tools?.length) return { text: "Demo" };
        const calls = toolHistory(request);
        const created = calls.find((call) => call.name === "arbeit_task_create");
        if (!created) return { tool: "arbeit_task_create", args: { title: "Read the readme" } };
        const taskId = JSON.parse(created.result).data.task.id;
        if (!calls.some((c) => c.name === "arbeit_task_start_work")) {
          return { tool: "arbeit_task_start_work", args: { task_id: taskId } };
        }
        if (!calls.some((c) => c.name === "read")) return { tool: "read", args: { filePath: "README.md" } };
        return { text: "Done." };
      });
      run = await runOpencode(sandbox, "Read the readme", { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
    });

    after(async () => {
      await model?.close();
      sandbox?.cleanup();
    });

    it("loads the plugin from the package entry and tracks the read", async () => {
      assertRan(run, model);
      const session = run.events[0].sessionID as string;
      const service = await openProject({ cwd: sandbox.project });
      try {
        const { data } = await service.query({ query: "tasks", params: {} }, { session: null, agent: null });
        const [task] = (data as any).tasks;
        assert.equal(task.title, "Read the readme");
        const files = await service.store.read((tx) => tx.filesOf(task.id));
        assert.deepEqual(
          files.map((file) => [file.file_path, file.operation, file.session_id]),
          [["README.md", "read", session]],
        );
      } finally {
        await service.close();
      }
    });
  });
});
