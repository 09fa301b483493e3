import assert from "node:assert/strict";
import { afterEach, beforeEach } from "node:test";
import { createArbeitHooks } from "../../src/opencode/plugin.js";
import { initProject } from "../../src/service/project.js";
import { tempDir } from "../helpers/temp.js";

/** Drives the plugin's hooks in-process, the way OpenCode calls them (the real host: opencode-run.test.ts). */

export type Hooks = Awaited<ReturnType<typeof createArbeitHooks>>;

function toolContext(sessionID: string, agent = "build", directory = "/") {
  return {
    sessionID,
    messageID: "msg_1",
    agent,
    directory,
    worktree: directory,
    abort: new AbortController().signal,
    metadata() {},
    ask: async () => {},
  };
}

/** Runs an arbeit_* tool as `session`; the envelope parsed, with the title OpenCode shows. */
export async function call(hooks: Hooks, name: string, args: unknown, session = "ses_main", agent = "build") {
  const result = (await hooks.tool![name]!.execute(args as never, toolContext(session, agent) as never)) as {
    title: string;
    output: string;
  };
  return { title: result.title, envelope: JSON.parse(result.output) };
}

/** Like call, asserting success, for the steps a test only sets up with. */
export async function succeed(hooks: Hooks, name: string, args: unknown, session = "ses_main"): Promise<any> {
  const { envelope } = await call(hooks, name, args, session);
  assert.equal(envelope.success, true, `${name}: ${JSON.stringify(envelope)}`);
  return envelope.data;
}

/** A built-in tool call as OpenCode reports it: before, then after with the tool's metadata. */
export async function afterTool(hooks: Hooks, session: string, tool: string, args: unknown, metadata: unknown = {}) {
  const callID = `call_${Math.random()}`;
  await hooks["tool.execute.before"]!({ tool, sessionID: session, callID }, { args });
  await hooks["tool.execute.after"]!({ tool, sessionID: session, callID, args }, { title: "", output: "", metadata });
}

export const event = (hooks: Hooks, value: unknown) => hooks.event!({ event: value as never });

/** A task created and started by `session`; its id. */
export async function startTask(hooks: Hooks, session = "ses_main", title = "Plugin task"): Promise<string> {
  const created = await call(hooks, "arbeit_task_create", { title }, session);
  assert.equal(created.envelope.success, true, JSON.stringify(created.envelope));
  assert.equal(created.title, "Create task");
  const id = created.envelope.data.task.id;
  await succeed(hooks, "arbeit_task_start_work", { task_id: id }, session);
  return id;
}

/** What the plugin adds to the system prompt of the session's next model call. */
export async function systemPrompt(hooks: Hooks, sessionID: string): Promise<string[]> {
  const output = { system: ["You are opencode."] };
  await hooks["experimental.chat.system.transform"]!({ sessionID, model: {} as never }, output);
  assert.equal(output.system[0], "You are opencode.");
  return output.system.slice(1);
}

/**
 * For each test of the enclosing describe, a new project with Arbeit set up (`prepare` adds files)
 * and the plugin's hooks on it, disposed afterwards. Assign `hooks` to swap in new ones (a restart).
 */
export function pluginProject(prepare?: (dir: string) => void): { dir: string; hooks: Hooks } {
  const current = { dir: "", hooks: undefined as unknown as Hooks };
  let cleanup = () => {};
  beforeEach(async () => {
    ({ dir: current.dir, cleanup } = tempDir());
    await initProject({ cwd: current.dir });
    prepare?.(current.dir);
    current.hooks = await createArbeitHooks({ directory: current.dir }, {}, {});
  });
  afterEach(async () => {
    await current.hooks.dispose!();
    cleanup();
  });
  return current;
}
