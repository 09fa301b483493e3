import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openProject } from "../../src/service/project.js";
import { TOOL_NAMES } from "../../src/tools/catalogue.js";
import { runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { type ChatRequest, type FakeModel, type Reply, startFakeModel, textOf, toolHistory } from "./fake-model.js";
import {
  createSandbox,
  OPENCODE,
  type OpencodeRun,
  type OpencodeSandbox,
  opencodeConfig,
  REPO,
  runOpencode,
  seedConfigDir,
} from "./harness.js";

/**
 * The real OpenCode binary (node_modules/.bin/opencode), headless, in a hermetic HOME, driven by
 * a scripted model; the plugin is loaded exactly as a user would load it. Each run takes 10-30 s.
 */

const RUN_TIMEOUT_MS = 150_000;
const BRIEFING = "Arbeit: this session is working on";
const SUBAGENT = "ARBEIT-SUBAGENT";
const SUMMARY = "SUMMARY-MARKER";

function opencodeWorks(): string | undefined {
  try {
    execFileSync(OPENCODE, ["--version"], { timeout: 30_000, stdio: "pipe" });
    return undefined;
  } catch (error) {
    return `the opencode binary does not run here: ${error instanceof Error ? error.message : String(error)}`;
  }
}
const cannotRun = requirement("the real-opencode tests", opencodeWorks());

const allText = (request: ChatRequest) => request.messages.map(textOf).join("\n");

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
