import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, it } from "node:test";
import { tool as opencodeTool } from "@opencode-ai/plugin";
import { createArbeitHooks } from "../../src/opencode/plugin.js";
import * as serverModule from "../../src/opencode/server.js";
import { opencodeArgs } from "../../src/opencode/tool-args.js";
import { HOST_TOOL_NAMES } from "../../src/opencode/tools.js";
import { initProject as initProjectIn } from "../../src/service/project.js";
import { TOOL_NAMES, TOOLS } from "../../src/tools/catalogue.js";
import { tempDir } from "../helpers/temp.js";
import { afterTool, call, event, type Hooks, pluginProject, startTask as startTaskIn } from "./plugin-driver.js";
import { trackedFiles } from "./tracked-files.js";

/** The plugin's hooks driven in-process as OpenCode calls them (the real host: opencode-run.test.ts). */

describe("the OpenCode plugin module", () => {
  it("default-exports { id, server } and nothing else (OpenCode rejects any other export)", () => {
    assert.deepEqual(Object.keys(serverModule), ["default"]);
    assert.equal(serverModule.default.id, "arbeit");
    assert.equal(typeof serverModule.default.server, "function");
  });

  it("registers every catalogue tool, none under a host tool's name", async () => {
    const { dir, cleanup } = tempDir();
    const hooks = await createArbeitHooks({ directory: dir });
    assert.deepEqual(Object.keys(hooks.tool!).sort(), [...TOOL_NAMES].sort());
    for (const name of Object.keys(hooks.tool!)) assert.ok(!HOST_TOOL_NAMES.has(name), name);
    await hooks.dispose!();
    cleanup();
  });

  it("gives OpenCode's own zod args that keep the catalogue's JSON schema and validation", () => {
    const z = opencodeTool.schema;
    for (const def of TOOLS) {
      const theirs = z.toJSONSchema(z.object(opencodeArgs(def.input.shape) as never)) as any;
      const ours = def.input.toJSONSchema() as any;
      assert.deepEqual(theirs.properties, ours.properties, def.name);
      assert.deepEqual(theirs.required ?? [], ours.required ?? [], def.name);
    }
    const startWork = z.object(
      opencodeArgs(TOOLS.find((t) => t.name === "arbeit_task_start_work")!.input.shape) as never,
    );
    assert.equal(startWork.safeParse({ task_id: "tkt-abcd1234" }).success, true);
    assert.equal(startWork.safeParse({ task_id: "nope" }).success, false);
  });
});

describe("the OpenCode plugin's hooks", () => {
  let dir: string;
  let hooks: Hooks;
  const project = pluginProject((root) => {
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "a.ts"), "a\n");
  });
  beforeEach(() => {
    ({ dir, hooks } = project);
  });

  const startTask = (session = "ses_main") => startTaskIn(hooks, session);

  const files = (taskId: string) => trackedFiles(dir, taskId);

  it("runs tools with OpenCode's session and agent as the caller", async () => {
    const id = await startTask();
    const got = await call(hooks, "arbeit_task_get", { task_id: id, include: ["sessions"] });
    assert.deepEqual(
      got.envelope.data.sessions.map((s: any) => [s.session_id, s.agent]),
      [["ses_main", "build"]],
    );
  });

  it("returns failures as the envelope, with the error code in the title", async () => {
    const got = await call(hooks, "arbeit_task_get", { task_id: "tkt-zzzzzzzz" });
    assert.equal(got.envelope.success, false);
    assert.equal(got.envelope.error.code, "TASK_NOT_FOUND");
    assert.equal(got.title, "Get task / briefing: TASK_NOT_FOUND");
    const invalid = await call(hooks, "arbeit_task_create", { title: "" });
    assert.equal(invalid.envelope.error.code, "TITLE_REQUIRED");
  });

  it("tracks read, write, edit and apply_patch for the session's active task", async () => {
    const id = await startTask();
    await afterTool(hooks, "ses_main", "read", { filePath: "src/a.ts" });
    await afterTool(hooks, "ses_main", "edit", { filePath: join(dir, "src", "a.ts"), oldString: "a", newString: "b" });
    await afterTool(hooks, "ses_main", "write", { filePath: join(dir, "src", "b.ts"), content: "" });
    await afterTool(
      hooks,
      "ses_main",
      "apply_patch",
      { patchText: "" },
      { files: [{ filePath: join(dir, "c.ts"), type: "add" }] },
    );
    await afterTool(hooks, "ses_main", "read", { filePath: "/etc/hosts" });
    await afterTool(hooks, "ses_main", "bash", { command: "cat src/a.ts" });
    assert.deepEqual(await files(id), [
      "c.ts write ses_main",
      "src/a.ts read ses_main",
      "src/a.ts write ses_main",
      "src/b.ts write ses_main",
    ]);
  });

  it("tracks nothing for a session without active work", async () => {
    const id = await startTask();
    await afterTool(hooks, "ses_other", "read", { filePath: "src/a.ts" });
    assert.deepEqual(await files(id), []);
  });

  it("records a subagent's files, as its own session, on its parent session's task while it has no work of its own", async () => {
    const id = await startTask();
    await event(hooks, { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_main" } } });
    await event(hooks, {
      type: "session.created",
      properties: { info: { id: "ses_grandchild", parentID: "ses_child" } },
    });
    await afterTool(hooks, "ses_child", "read", { filePath: "src/a.ts" });
    await afterTool(hooks, "ses_grandchild", "write", { filePath: "src/b.ts" });
    assert.deepEqual(await files(id), ["src/a.ts read ses_child", "src/b.ts write ses_grandchild"]);
  });

  it("lets two subagents work on two tasks at once, each one's files on its own task", async () => {
    const parentTask = await startTask();
    for (const child of ["ses_one", "ses_two"])
      await event(hooks, { type: "session.created", properties: { info: { id: child, parentID: "ses_main" } } });
    const one = await startTask("ses_one");
    const two = await startTask("ses_two");
    await afterTool(hooks, "ses_one", "write", { filePath: "src/one.ts" });
    await afterTool(hooks, "ses_two", "write", { filePath: "src/two.ts" });
    assert.deepEqual(await files(one), ["src/one.ts write ses_one"]);
    assert.deepEqual(await files(two), ["src/two.ts write ses_two"]);
    assert.deepEqual(await files(parentTask), []);
    // A subagent cannot take its parent's task: the parent's session holds it.
    await event(hooks, { type: "session.created", properties: { info: { id: "ses_three", parentID: "ses_main" } } });
    const taken = await call(hooks, "arbeit_task_start_work", { task_id: parentTask }, "ses_three");
    assert.equal(taken.envelope.error.code, "ALREADY_CLAIMED");
  });

  it("tracks file.edited as a write by the session running a tool", async () => {
    const id = await startTask();
    await hooks["tool.execute.before"]!({ tool: "edit", sessionID: "ses_main", callID: "c9" }, { args: {} });
    await event(hooks, { type: "file.edited", properties: { file: join(dir, "src", "a.ts") } });
    assert.deepEqual(await files(id), ["src/a.ts write ses_main"]);
  });

  it("adds the active task's briefing to compaction, and nothing for a session without one", async () => {
    const id = await startTask();
    await call(hooks, "arbeit_context_add", { task_id: id, type: "decision", content: "Use tabs" });
    await call(hooks, "arbeit_progress_add", { task_id: id, items: ["Write it", "Test it"] });
    await afterTool(hooks, "ses_main", "read", { filePath: "src/a.ts" });
    const output = { context: [] as string[] };
    await hooks["experimental.session.compacting"]!({ sessionID: "ses_main" }, output);
    assert.equal(output.context.length, 1);
    const text = output.context[0]!;
    assert.match(text, new RegExp(`^Arbeit: this session is working on:\nTask ${id} \\[in_progress\\] Plugin task`));
    assert.match(text, /- decision: Use tabs/);
    assert.match(text, /progress \(0\/2 done\), remaining:/);
    assert.match(text, /\[ \] Write it \(prg-/);
    assert.match(text, /files: src\/a\.ts \(read\)/);
    const none = { context: [] as string[] };
    await hooks["experimental.session.compacting"]!({ sessionID: "ses_other" }, none);
    assert.deepEqual(none.context, []);
  });

  it("scopes tools to the list named in the plugin options", async () => {
    const listed = await createArbeitHooks({ directory: dir }, { list: "frontend" }, {});
    try {
      const created = await call(listed, "arbeit_task_create", { title: "Scoped" });
      assert.equal(created.envelope.data.task.list_id, "frontend");
    } finally {
      await listed.dispose!();
    }
  });
});

describe("the OpenCode plugin in a project without Arbeit", () => {
  it("stays silent in hooks, answers NOT_INITIALIZED, and works once arbeit_init ran", async () => {
    const { dir, cleanup } = tempDir();
    const hooks = await createArbeitHooks({ directory: dir }, {}, {});
    try {
      await afterTool(hooks, "ses_main", "read", { filePath: "x.ts" });
      const output = { context: [] as string[] };
      await hooks["experimental.session.compacting"]!({ sessionID: "ses_main" }, output);
      assert.deepEqual(output.context, []);
      const before = await call(hooks, "arbeit_query", { query: "ready" });
      assert.equal(before.envelope.error.code, "NOT_INITIALIZED");
      const init = await call(hooks, "arbeit_init", {});
      assert.equal(init.envelope.success, true, JSON.stringify(init.envelope));
      const after = await call(hooks, "arbeit_query", { query: "ready" });
      assert.equal(after.envelope.success, true, JSON.stringify(after.envelope));
    } finally {
      await hooks.dispose!();
      cleanup();
    }
  });
});

describe("the OpenCode plugin and a tool named like what every JavaScript object has", () => {
  it("tracks no file for a tool named constructor, toString or valueOf, and logs no failure", async () => {
    const { dir, cleanup } = tempDir();
    await initProjectIn({ cwd: dir });
    const warnings: string[] = [];
    const client = {
      app: { log: async (entry: { body: { message: string } }) => void warnings.push(entry.body.message) },
    };
    const hooks = await createArbeitHooks({ directory: dir, client } as never, {}, {});
    try {
      const id = (await call(hooks, "arbeit_task_create", { title: "Plain names" })).envelope.data.task.id;
      await call(hooks, "arbeit_task_start_work", { task_id: id });
      for (const tool of ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"])
        await afterTool(hooks, "ses_main", tool, { filePath: "src/a.ts" });
      await afterTool(hooks, "ses_main", "read", { filePath: "src/b.ts" });
      assert.deepEqual(warnings, []);
      assert.deepEqual(await trackedFiles(dir, id), ["src/b.ts read ses_main"]);
    } finally {
      await hooks.dispose!();
      cleanup();
    }
  });
});
