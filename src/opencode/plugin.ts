import type { Hooks, PluginInput, PluginOptions } from "@opencode-ai/plugin";
import { heartbeatSeconds } from "../domain/claims.js";
import { checkEditStep } from "../remote/edit-check.js";
import { Heartbeat } from "../remote/heartbeat.js";
import { localRelative, type StepSession, trackFilesStep } from "../remote/steps.js";
import type { Caller } from "../service/caller.js";
import { readCommit } from "../service/git-commit.js";
import { locate } from "../service/project.js";
import { resolveLikeKernel } from "../service/resolve-path.js";
import { commitOfToolCall } from "./commits.js";
import { pathsBeforeToolCall, ReservedFileError } from "./edit-guard.js";
import { type FileTouch, touchesFromToolCall, touchFromFileEdited } from "./file-touches.js";
import { SessionPlans } from "./plans.js";
import {
  compactionStep,
  mirrorTodosStep,
  PLAN_CHARS,
  recordCommitStep,
  recordPlanStep,
  systemPromptStep,
} from "./plugin-steps.js";
import { ProjectHandle } from "./project-handle.js";
import { SessionActivity, SessionTree } from "./sessions.js";
import { isHelperAgentCall, SystemPrompts } from "./system-prompt.js";
import { type Todo, todosOf } from "./todos.js";
import { opencodeTools } from "./tools.js";

/** Options from opencode.json: `"plugin": [["arbeit", {"list": "frontend"}]]`. */
export interface ArbeitPluginOptions {
  /** Task list to scope reads and creates to (like --list / ARBEIT_LIST). */
  list?: string;
  /** A database file instead of the project's .arbeit/arbeit.db (like --db / ARBEIT_DB). */
  db?: string;
}

function readOptions(options: PluginOptions | undefined, env: NodeJS.ProcessEnv): ArbeitPluginOptions {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  return {
    list: text(options?.list) ?? text(env.ARBEIT_LIST),
    db: text(options?.db) ?? text(env.ARBEIT_DB),
  };
}

type HookInput = Pick<PluginInput, "directory"> & Partial<Pick<PluginInput, "client">>;

/**
 * The Arbeit plugin's hooks for one OpenCode project instance: the catalogue's tools, file
 * tracking from the built-in file tools and `file.edited`, every session (a sub-agent's too) its
 * own Arbeit session, the session's briefing and news in its system prompts, its todo list
 * mirrored as progress of its active task, and that task's briefing kept across compaction. No
 * hook ever throws into OpenCode: Arbeit trouble is logged and the user's session carries on.
 *
 * Every hook reads what it needs here (paths made relative to the project root, commits read
 * from the local repository) and hands it to a store step (src/opencode/plugin-steps.ts): on the
 * project's own store in this process, or, in a checkout that uses `arbeit serve`, as one request
 * to the service, as do the tools.
 */
export async function createArbeitHooks(
  input: HookInput,
  options?: PluginOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Hooks> {
  const settings = readOptions(options, env);
  const directory = input.directory;
  const project = new ProjectHandle(
    { cwd: directory, db: settings.db },
    { agent: null, ...(settings.list ? { list_id: settings.list } : {}) },
    env,
  );
  const tree = new SessionTree();
  const activity = new SessionActivity();
  const prompts = new SystemPrompts();
  const plans = new SessionPlans();
  // Each todo.updated event is mirrored after the session's previous one, so that two quick
  // updates never both add the same step.
  const todoQueues = new Map<string, Promise<void>>();

  const callerOf = (session: string, agent: string | null): Caller => ({
    session,
    agent,
    parents: tree.ancestors(session),
    ...(settings.list ? { list_id: settings.list } : {}),
  });

  const report = (what: string, error: unknown) =>
    log(`arbeit: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
  const log = async (message: string) => {
    try {
      await input.client?.app.log({ body: { service: "arbeit", level: "warn", message } });
    } catch {
      // Logging is best effort; a broken log must not break the session either.
    }
  };

  /** Who a hook's step acts for: the session, the sessions that started it, its agent. */
  const whoIs = (session: string): StepSession => ({
    session,
    parents: tree.ancestors(session),
    agent: tree.agentOf(session),
  });

  /** The real project root paths are made relative to: the service's checkout may sit anywhere. */
  const projectRoot = () => {
    const spelled = project.remote()?.root ?? locate(project.where)?.root ?? directory;
    return resolveLikeKernel(spelled) ?? spelled;
  };

  const track = async (touches: FileTouch[], session: string) => {
    if (touches.length === 0) return;
    const run = await project.steps();
    if (!run) return;
    const root = projectRoot();
    const relative = touches.flatMap((touch) => {
      const path = localRelative(root, touch.path);
      return path ? [{ path, operation: touch.operation }] : [];
    });
    if (relative.length > 0) await run(trackFilesStep, { touches: relative }, whoIs(session));
  };

  /**
   * Before a file tool writes: refuses (throws) an edit of a file another session reserved
   * exclusively, the reason for the model; logs a shared one's warning. Arbeit trouble only logs.
   */
  const guardEdit = async (tool: string, args: unknown, session: string) => {
    let answer: Awaited<ReturnType<typeof checkEditStep.run>> | undefined;
    try {
      const paths = pathsBeforeToolCall(tool, args, directory);
      const run = paths.length > 0 ? await project.steps() : undefined;
      if (!run) return;
      const root = projectRoot();
      const relative = [...new Set(paths.flatMap((path) => localRelative(root, path) ?? []))];
      if (relative.length > 0) answer = await run(checkEditStep, { paths: relative }, whoIs(session));
    } catch (error) {
      await report(`checking ${tool}'s files`, error);
    }
    if (answer?.decision === "deny") throw new ReservedFileError(`Arbeit: ${answer.reason}`);
    if (answer?.decision === "warn") await log(`arbeit: ${answer.reason}`);
  };

  // When each bash call started: a quiet `git commit -q` is HEAD only if made during the call.
  const shellStarts = new Map<string, number>();
  const recordCommit = async (sha: string, since: number, session: string) => {
    const run = await project.steps();
    if (!run) return;
    const commit = readCommit(directory, sha, since);
    if (commit) await run(recordCommitStep, { commit }, whoIs(session));
  };

  const recordApprovedPlan = async (session: string) => {
    const plan = plans.approved(session, PLAN_CHARS);
    const run = plan ? await project.steps() : undefined;
    if (run && plan) await run(recordPlanStep, { plan }, whoIs(session));
  };

  const mirror = (session: string, todos: Todo[]) => {
    const mirrored = (todoQueues.get(session) ?? Promise.resolve()).then(async () => {
      if (todos.length === 0) return;
      const run = await project.steps();
      if (run) await run(mirrorTodosStep, { todos }, whoIs(session));
    });
    todoQueues.set(
      session,
      mirrored.catch(() => undefined),
    );
    return mirrored;
  };

  // OpenCode's process is the conversations' live process: while it runs, every session it has
  // seen keeps its claims however long a tool call runs; when it ends they lapse at once, and if
  // it dies, within the heartbeat's length.
  const heartbeat = new Heartbeat(
    heartbeatSeconds(env.ARBEIT_HEARTBEAT_SECONDS),
    () => project.steps(),
    (error) => void report("keeping the session's claims", error),
  );
  const alive = (session: string, now = false) => heartbeat.keep(whoIs(session), now);

  const tools = opencodeTools(project, (context) => {
    tree.agentIs(context.sessionID, context.agent);
    return callerOf(context.sessionID, context.agent || null);
  });

  return {
    tool: tools as unknown as Hooks["tool"],

    "chat.message": async (hook) => {
      tree.agentIs(hook.sessionID, hook.agent);
      alive(hook.sessionID);
    },

    "tool.execute.before": async (hook, output) => {
      // A refused call never runs: nothing of it is recorded.
      await guardEdit(hook.tool, output?.args, hook.sessionID);
      activity.started(hook.callID, hook.sessionID, hook.tool);
      if (hook.tool === "bash") shellStarts.set(hook.callID, Date.now());
    },

    "tool.execute.after": async (hook, output) => {
      activity.finished(hook.callID);
      // Arbeit's own tools may have taken a claim with a lease far longer than the heartbeat's.
      alive(hook.sessionID, hook.tool.startsWith("arbeit_"));
      const started = shellStarts.get(hook.callID) ?? Date.now();
      shellStarts.delete(hook.callID);
      try {
        const touches = touchesFromToolCall(hook.tool, hook.args, output?.metadata, directory);
        plans.wrote(hook.sessionID, touches);
        await track(touches, hook.sessionID);
        if (hook.tool === "plan_exit") await recordApprovedPlan(hook.sessionID);
        const sha = commitOfToolCall(hook.tool, hook.args, output);
        if (sha) await recordCommit(sha, started, hook.sessionID);
      } catch (error) {
        await report(`tracking ${hook.tool}`, error);
      }
    },

    event: async ({ event }) => {
      try {
        if (event.type === "session.created") {
          tree.created(event.properties.info.id, event.properties.info.parentID);
          alive(event.properties.info.id);
        } else if (event.type === "session.deleted") {
          heartbeat.forget(event.properties.info.id);
          tree.deleted(event.properties.info.id);
          prompts.forget(event.properties.info.id);
          plans.forget(event.properties.info.id);
          todoQueues.delete(event.properties.info.id);
        } else if (event.type === "session.idle") activity.idle(event.properties.sessionID);
        else if (event.type === "session.compacted") prompts.forget(event.properties.sessionID);
        else if (event.type === "todo.updated") await mirror(event.properties.sessionID, todosOf(event.properties));
        else if (event.type === "file.edited") {
          const session = activity.likelySession();
          const touch = touchFromFileEdited(event.properties, directory);
          if (session && touch) await track([touch], session);
        }
      } catch (error) {
        await report(`handling ${event.type}`, error);
      }
    },

    "experimental.chat.system.transform": async (hook, output) => {
      try {
        const session = hook.sessionID;
        if (isHelperAgentCall(output.system)) return;
        const run = session ? await project.steps() : undefined;
        if (!session || !run) return;
        const who = whoIs(session);
        output.system.push(...(await prompts.next(session, (after) => run(systemPromptStep, { after }, who))));
      } catch (error) {
        await report("adding the briefing to the system prompt", error);
      }
    },

    "experimental.session.compacting": async (hook, output) => {
      try {
        const run = await project.steps();
        const text = run ? (await run(compactionStep, {}, whoIs(hook.sessionID))).text : undefined;
        if (text) output.context.push(text);
      } catch (error) {
        await report("adding the briefing to compaction", error);
      }
    },

    dispose: async () => {
      await heartbeat.end();
      await project.close();
    },
  };
}
