import { editCheckFailsClosed } from "../remote/edit-check-setting.js";
import { isServiceAway } from "../remote/hook-delivery.js";
import { type AnyStep, localRelative, localRunner, remoteRunner } from "../remote/steps.js";
import { type ServiceTarget, serviceTarget } from "../remote/target.js";
import { pathDeeperThan } from "../schemas/json-size.js";
import { LIMITS } from "../schemas/limits.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import { readCommit } from "../service/git-commit.js";
import { isNoUsableStore, locate, openProject } from "../service/project.js";
import { resolveLikeKernel } from "../service/resolve-path.js";
import { awayOutcome, noticeAfter } from "./away-output.js";
import { isEditTool, preToolUse, preToolUseInput } from "./edit-guard.js";
import { committedSha } from "./git-commit.js";
import { type HookName, type HookOutcome, type HookSettings, hookSession } from "./hook-common.js";
import {
  type HookPayload,
  hostTaskKey,
  isRow,
  parsePayload,
  planFromPostToolUse,
  projectDirOf,
  stepsFromPostToolUse,
  text,
  touchFromPostToolUse,
} from "./hook-payload.js";
import { shownRefusal } from "./hook-refusal.js";
import {
  FAILURE_CHARS,
  type HookAnswer,
  hostTask,
  PLAN_CHARS,
  PROMPT_CHARS,
  postCompact,
  postToolUse,
  postToolUseFailure,
  preCompact,
  sessionEnd,
  sessionStart,
  subagentStart,
  subagentStop,
  userPromptSubmit,
} from "./hook-steps.js";
import { noteArbeitCall } from "./pre-tool-use.js";

/**
 * Claude Code command hooks (`arbeit hook <name>`, stdin JSON). A hook must never break the
 * user's session: every Arbeit-side problem becomes a note on stderr with exit 0, and a project
 * without Arbeit gets no output at all.
 *
 * Each hook reads its payload here, on the host's machine, and hands what it found to its store
 * step (src/claude/hook-steps.ts): in this process on the project's own store, or as one request
 * to the `arbeit serve` service the checkout uses (src/remote/steps.ts).
 */

export { HOOK_NAMES, type HookName, type HookOutcome, type HookSettings, hookSession } from "./hook-common.js";

export const CLAUDE_AGENT = "claude-code";

const clip = (value: string, max: number) => (value.length <= max ? value : value.slice(0, max));

/** What a failed call was asked to do, in a line: the command, the file, else its input. */
function callSummary(input: unknown): string | undefined {
  if (!isRow(input)) return undefined;
  return (
    text(input.command) ??
    text(input.file_path) ??
    text(input.notebook_path) ??
    text(input.url) ??
    // JSON.stringify recurses: an input nested thousands of levels deep would overflow the stack.
    (pathDeeperThan(input, LIMITS.input_depth)
      ? `(an input nested over ${LIMITS.input_depth} levels deep)`
      : JSON.stringify(input))
  );
}

/** Where a hook's local part runs: the folder Claude Code runs in, and the real project root. */
interface Here {
  dir: string;
  root: string;
}

/** A hook's store step and the input its local part read; undefined when there is nothing to do. */
type Local = { step: AnyStep; input: unknown } | undefined;

function taskEvent(payload: HookPayload, status: string): Local {
  if (!payload.task_id) return undefined;
  const key = hostTaskKey(payload.session_id, payload.task_id);
  return {
    step: hostTask,
    input: { steps: [{ key, ...(payload.task_subject ? { content: payload.task_subject } : {}), status }] },
  };
}

/** The local part of each hook that works on the store: it reads the payload and this machine. */
const LOCAL: Record<HookName, (payload: HookPayload, here: Here) => Local> = {
  // File tools: may this session edit the file now (file reservations)?
  "pre-tool-use": (payload, here) => {
    const input = preToolUseInput(payload, here.dir, here.root);
    return input && { step: preToolUse, input };
  },
  "session-start": (payload) => ({
    step: sessionStart,
    input: payload.source ? { source: clip(payload.source, 200) } : {},
  }),
  "user-prompt-submit": (payload) => {
    const prompt = payload.prompt ?? "";
    // A background sub-agent's result comes back as a prompt; it is not the person's.
    const own = !prompt.startsWith("<task-notification>");
    return {
      step: userPromptSubmit,
      input: own ? { prompt: { text: prompt.slice(0, PROMPT_CHARS), chars: prompt.length } } : {},
    };
  },
  "post-tool-use": (payload, here) => {
    const steps = stepsFromPostToolUse(payload);
    if (steps) return { step: postToolUse, input: { steps } };
    const plan = planFromPostToolUse(payload);
    if (plan) return { step: postToolUse, input: { plan: clip(plan, PLAN_CHARS) } };
    const sha = committedSha(payload);
    if (sha) {
      const commit = readCommit(payload.cwd ?? here.dir, sha, Date.now() - (payload.duration_ms ?? 0));
      return { step: postToolUse, input: commit ? { commit } : {} };
    }
    const touch = touchFromPostToolUse(payload, here.dir);
    const path = touch && localRelative(here.root, touch.path);
    return { step: postToolUse, input: touch && path ? { touch: { path, operation: touch.operation } } : {} };
  },
  "post-tool-use-failure": (payload) => {
    // An interruption is the person's choice, and a failed Arbeit call is answered to the agent already.
    if (payload.is_interrupt || !payload.tool_name || payload.tool_name.startsWith("mcp__arbeit__")) return undefined;
    const input = callSummary(payload.tool_input);
    return {
      step: postToolUseFailure,
      input: {
        tool: clip(payload.tool_name, 200),
        ...(input === undefined ? {} : { input: clip(input, FAILURE_CHARS) }),
        error: clip(payload.error ?? "(no error given)", FAILURE_CHARS),
      },
    };
  },
  // Claude Code's own task list: a task created, or marked completed (by TaskUpdate or a teammate).
  "task-created": (payload) => taskEvent(payload, "pending"),
  "task-completed": (payload) => taskEvent(payload, "completed"),
  "subagent-start": (payload) => ({
    step: subagentStart,
    input: { agent_id: payload.agent_id, agent_type: payload.agent_type },
  }),
  // The agent that writes a compaction's summary stops without having started: not a sub-agent.
  "subagent-stop": (payload) =>
    payload.agent_type
      ? { step: subagentStop, input: { agent_id: payload.agent_id, agent_type: payload.agent_type } }
      : undefined,
  "pre-compact": () => ({ step: preCompact, input: {} }),
  "post-compact": (payload) => ({
    step: postCompact,
    input: { trigger: payload.trigger ?? null, summary_chars: payload.compact_summary?.length ?? 0 },
  }),
  "session-end": (payload) => ({ step: sessionEnd, input: { reason: payload.reason ?? "other" } }),
};

export async function runClaudeHook(
  name: HookName,
  input: string,
  settings: HookSettings,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<HookOutcome> {
  let service: Promise<ArbeitService> | undefined;
  let away: { remote: ServiceTarget; session: string | null; paths?: string[] } | undefined;
  let event: string | undefined;
  try {
    const payload = parsePayload(input);
    event = payload.hook_event_name;
    const dir = projectDirOf(payload, env, cwd);
    const where = { cwd: dir, db: settings.db };
    const location = locate(where);
    // Runs before every Arbeit MCP call: it opens no database, only notes a sub-agent's call.
    if (name === "pre-tool-use" && !isEditTool(payload.tool_name)) return noteArbeitCall(payload, location);
    // A checkout that uses an Arbeit service (or a process given ARBEIT_URL) sends the step there.
    const remote = serviceTarget(where, env);
    if (!remote && !location) return { stdout: "", stderr: "" };
    const local = LOCAL[name](payload, {
      dir,
      root: remote?.root ?? resolveLikeKernel(location!.root) ?? location!.root,
    });
    if (!local) return { stdout: "", stderr: "" };
    const run = remote
      ? remoteRunner(remote, env, settings.list)
      : localRunner(
          () => {
            service ??= openProject({ ...where, shortLived: true });
            return service;
          },
          { agent: settings.agent ?? CLAUDE_AGENT, ...(settings.list ? { list_id: settings.list } : {}) },
        );
    const who = hookSession(payload);
    if (remote)
      away = {
        remote,
        session: who.session,
        ...(name === "pre-tool-use" ? { paths: (local.input as { paths: string[] }).paths } : {}),
      };
    const answer = (await run(local.step, local.input, who)) as HookAnswer;
    if (!remote) return { stdout: answer.stdout, stderr: "" };
    return { stdout: noticeAfter(name, answer.stdout, remote, who.session, editCheckFailsClosed(remote)), stderr: "" };
  } catch (error) {
    if (isNoUsableStore(error)) return { stdout: "", stderr: "" };
    if (away && isServiceAway(error))
      return awayOutcome(name, error, away.remote, away.session, away.paths, editCheckFailsClosed(away.remote));
    const shown = shownRefusal(name, event, error);
    if (shown) return shown;
    const message = error instanceof Error ? error.message : String(error);
    return { stdout: "", stderr: `arbeit: ${name} hook skipped: ${message}\n` };
  } finally {
    await (await service?.catch(() => undefined))?.close().catch(() => undefined);
  }
}
