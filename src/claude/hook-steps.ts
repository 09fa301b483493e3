import { DEFAULT_HEARTBEAT_SECONDS } from "../domain/claims.js";
import { FILE_OPERATIONS, type FileOperation } from "../domain/types.js";
import { activeBriefingText } from "../fragments/briefing-text.js";
import { lastWorkedOnText, sessionStartContext } from "../fragments/session-start.js";
import {
  commitInput,
  count,
  list,
  noInput,
  oneOf,
  optionalCount,
  optionalText,
  relativePath,
  row,
  text,
} from "../remote/step-input.js";
import type { Access, AnyStep, HostStep } from "../remote/steps.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { CommitInput } from "../service/commits.js";
import { recordPlan } from "../service/host-plans.js";
import { HOST_KEY_CHARS, type HostListItem, mirrorHostSteps } from "../service/host-steps.js";
import type { NewsItem } from "../service/session-news.js";
import { preToolUse } from "./edit-guard.js";
import { collectMemory } from "./memory-gc.js";

/**
 * The store steps of Claude Code's hooks (see src/remote/steps.ts): what each hook does with the
 * store, given what its local part read (src/claude/hook-locals.ts). Each answers the hook's
 * stdout. Locally they run in the hook's process; in a checkout that uses `arbeit serve`, on the
 * service. A read-only token's hooks write nothing: session-start and pre-compact answer their
 * briefing (read without moving the session's news cursor or collecting memory), the others
 * answer nothing.
 */

export interface HookAnswer {
  stdout: string;
}

/** A prompt is logged for the task's history, not kept whole: a pasted log can run to megabytes. */
export const PROMPT_CHARS = 2_000;
/** What a failed call was asked to do and how it failed, as sent: the store keeps less of either. */
export const FAILURE_CHARS = 8_000;
const SHORT = 200;

const silent: HookAnswer = { stdout: "" };
const quiet = { answer: silent };

/** The JSON that gives the model extra context; `hookEventName` is required or Claude Code drops it. */
const additionalContext = (hookEventName: string, context: string): HookAnswer => ({
  stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName, additionalContext: context } })}\n`,
});

/**
 * Runs a hook's work on the store as one transaction: on Postgres its statements share round
 * trips and it commits once. A write transaction, unless the caller may only read; on a store
 * that cannot be written each part runs as it would alone (the writes fail, the reads answer).
 */
function oneTransaction<T>(
  service: ArbeitService,
  access: Access,
  fn: (finalWave: () => void) => Promise<T>,
): Promise<T> {
  const none = () => {};
  if (service.store.readOnly !== undefined) return fn(none);
  if (access === "read-only") return service.store.read(() => fn(none));
  // `finalWave`: the hook's own code, which issues no statement itself, says that every part that
  // writes has settled and what still runs only reads (StoreTx.finalWave). Each part is a call
  // that joined the transaction, and says so of itself.
  return service.store.write((tx) => fn(() => tx.finalWave()));
}

/**
 * Parts of one hook that do not depend on each other, run side by side in its transaction (their
 * statements travel together). Every part has finished before a failure is thrown, so nothing is
 * left running in a transaction that rolls back.
 */
async function together<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === "rejected") throw first.reason;
  if (second.status === "rejected") throw second.reason;
  return [first.value, second.value];
}

/** News for the model, one line each, a person's answers first; nothing when there is none. */
function newsText(news: ReadonlyArray<NewsItem>): string | undefined {
  if (news.length === 0) return undefined;
  const ordered = [...news.filter((item) => item.answer), ...news.filter((item) => !item.answer)];
  const lines = ["Arbeit: news since this session last looked:", ...ordered.map((item) => `- ${item.text}`)];
  return lines.join("\n");
}

function newsContext(hookEventName: string, news: ReadonlyArray<NewsItem>): HookAnswer {
  const text = newsText(news);
  return text ? additionalContext(hookEventName, text) : silent;
}

/**
 * SessionStart's `source` that offers the session's retrospective (src/service/retrospective.ts),
 * the only hook output after a compaction or a run's end that reaches the model: PreCompact's
 * goes to the model that writes the summary, SessionEnd's nowhere. After `compact` the agent is
 * offered what it recorded before the compaction; on `resume`, what its last run recorded.
 */
const RETROSPECTIVE_SOURCES = { compact: "compaction", resume: "session_end" } as const;

export const sessionStart: HostStep<{ source?: string }, HookAnswer> = {
  name: "session-start",
  read: (input) => ({ source: optionalText(row(input), "source", SHORT) }),
  readOnly: "reads",
  async run(service, input, caller, access) {
    const trigger = RETROSPECTIVE_SOURCES[input.source as keyof typeof RETROSPECTIVE_SOURCES];
    const offers = trigger !== undefined && access === "read-write" && caller.session !== undefined;
    const [start, offer] = await oneTransaction(service, access, (finalWave) => {
      const news = service.sessionNews(caller, { advance: access !== "read-only" });
      const offered = offers
        ? service.offerRetrospective(trigger, caller).then((answer) => answer.data.text)
        : Promise.resolve(null);
      // The news' cursor and the offer's mark are the hook's writes: once both have settled, the
      // briefing and the resume only read, and the COMMIT may leave with their last reads.
      Promise.allSettled([news, offered]).then(finalWave);
      return together(sessionStartContext(service, caller, { news }), offered);
    });
    return additionalContext("SessionStart", offer ? `${start.text}\n\n${offer}` : start.text);
  },
};

export interface PromptFacts {
  /** The person's prompt (its first PROMPT_CHARS) and its length; absent for a sub-agent's result. */
  prompt?: { text: string; chars: number };
}

export const userPromptSubmit: HostStep<PromptFacts, HookAnswer> = {
  name: "user-prompt-submit",
  read(input) {
    const value = row(input);
    if (value.prompt === undefined) return {};
    const prompt = row(value.prompt, "prompt");
    return { prompt: { text: text(prompt, "text", PROMPT_CHARS), chars: count(prompt, "chars") } };
  },
  readOnly: quiet,
  async run(service, input, caller, access) {
    const [{ data }] = await oneTransaction(service, access, () =>
      together(
        service.sessionNews(caller),
        input.prompt
          ? service.recordSessionEvent(
              { event_type: "prompt_submitted", payload: { prompt: input.prompt.text, chars: input.prompt.chars } },
              caller,
            )
          : Promise.resolve(undefined),
      ),
    );
    return newsContext("UserPromptSubmit", data.news);
  },
};

/** More steps than any host's list holds; each is cut to a progress item's length when mirrored. */
const MAX_STEPS = 1_000;
const STEP_CHARS = 10_000;
/** The longest plan taken; the store keeps less of it. */
export const PLAN_CHARS = 100_000;

/** Steps of Claude Code's own task list (TaskCreate, TaskUpdate, TodoWrite, TaskCreated, TaskCompleted). */
function readSteps(value: Record<string, unknown>, field: string): HostListItem[] {
  return list(value, field, MAX_STEPS, (entry, name) => {
    const step = row(entry, name);
    const key = optionalText(step, "key", HOST_KEY_CHARS);
    const content = optionalText(step, "content", STEP_CHARS);
    return { ...(key ? { key } : {}), ...(content ? { content } : {}), status: text(step, "status", SHORT) };
  });
}

export interface ToolUseFacts {
  /** The file a file tool read or wrote, relative to the project root. */
  touch?: { path: string; operation: FileOperation };
  /** The commit a Bash call made, as git records it. */
  commit?: CommitInput;
  /** Claude Code's own task list as the call changed it, mirrored as progress (src/service/host-steps.ts). */
  steps?: HostListItem[];
  /** The plan the person approved (ExitPlanMode), recorded as work (src/service/host-plans.ts). */
  plan?: string;
}

/** What the model is told after its plan became Arbeit work. */
function planLine(recorded: { task_id: string; created: boolean; steps: number; subtasks: string[] }): string {
  const where = recorded.created
    ? `a new task ${recorded.task_id}, which this session now works on`
    : `task ${recorded.task_id}`;
  const parts = [`${recorded.steps} step(s) as progress items`];
  if (recorded.subtasks.length > 0) parts.push(`subtasks ${recorded.subtasks.join(", ")}`);
  return `Arbeit: the approved plan is recorded on ${where}, with ${parts.join(" and ")}.`;
}

export const postToolUse: HostStep<ToolUseFacts, HookAnswer> = {
  name: "post-tool-use",
  read(input) {
    const value = row(input);
    const facts: ToolUseFacts = {};
    if (value.touch !== undefined) {
      const touch = row(value.touch, "touch");
      facts.touch = { path: relativePath(touch, "path"), operation: oneOf(touch, "operation", FILE_OPERATIONS) };
    }
    if (value.commit !== undefined) facts.commit = commitInput(value.commit, "commit");
    if (value.steps !== undefined) facts.steps = readSteps(value, "steps");
    if (value.plan !== undefined) facts.plan = text(value, "plan", PLAN_CHARS);
    return facts;
  },
  readOnly: quiet,
  async run(service, input, caller, access) {
    const record = async () => {
      if (input.commit) await service.recordCommit(input.commit, caller);
      else if (input.touch && caller.session) await service.trackFile(input.touch, caller);
      if (input.steps) await mirrorHostSteps(service, caller, input.steps);
      return input.plan === undefined ? undefined : await recordPlan(service, caller, input.plan, "Claude Code");
    };
    // After every tool call: a person's answer (or other news) reaches the model at its next step.
    // The cursor moves only when there is something to tell. Read beside the call's own records,
    // in the same transaction: neither depends on the other.
    const [recorded, news] = await oneTransaction(service, access, () =>
      together(
        record(),
        caller.session ? service.sessionNews(caller, { advance: "when-told" }) : Promise.resolve(undefined),
      ),
    );
    if (!news) return silent;
    const lines = [recorded && planLine(recorded), newsText(news.data.news)].filter((line) => line);
    return lines.length > 0 ? additionalContext("PostToolUse", lines.join("\n")) : silent;
  },
};

/** TaskCreated and TaskCompleted: one step of Claude Code's task list, by its id. */
export const hostTask: HostStep<{ steps: HostListItem[] }, HookAnswer> = {
  name: "host-task",
  read: (input) => ({ steps: readSteps(row(input), "steps") }),
  readOnly: quiet,
  async run(service, input, caller) {
    await mirrorHostSteps(service, caller, input.steps);
    return silent;
  },
};

export interface FailureFacts {
  tool: string;
  input?: string;
  error: string;
}

export const postToolUseFailure: HostStep<FailureFacts, HookAnswer> = {
  name: "post-tool-use-failure",
  read(input) {
    const value = row(input);
    return {
      tool: text(value, "tool", SHORT),
      input: optionalText(value, "input", FAILURE_CHARS),
      error: text(value, "error", FAILURE_CHARS),
    };
  },
  readOnly: quiet,
  async run(service, input, caller, access) {
    await oneTransaction(service, access, () => service.recordToolFailure(input, caller));
    return silent;
  },
};

export interface SubagentFacts {
  agent_id?: string;
  agent_type?: string;
}

const readSubagent = (input: unknown): SubagentFacts => {
  const value = row(input);
  return { agent_id: optionalText(value, "agent_id", SHORT), agent_type: optionalText(value, "agent_type", SHORT) };
};

export const subagentStart: HostStep<SubagentFacts, HookAnswer> = {
  name: "subagent-start",
  read: readSubagent,
  readOnly: quiet,
  async run(service, input, caller, access) {
    // SubagentStart context reaches that sub-agent only: the work it is helping with.
    const [, brief] = await oneTransaction(service, access, () =>
      together(
        service.recordSessionEvent(
          { event_type: "subagent_started", payload: { agent_id: input.agent_id, agent_type: input.agent_type } },
          caller,
        ),
        caller.session ? activeBriefingText(service, caller.session, caller.parents) : Promise.resolve(undefined),
      ),
    );
    return brief ? additionalContext("SubagentStart", brief) : silent;
  },
};

export const subagentStop: HostStep<SubagentFacts, HookAnswer> = {
  name: "subagent-stop",
  read: readSubagent,
  readOnly: quiet,
  async run(service, input, caller, access) {
    await oneTransaction(service, access, async () => {
      const ended = (await service.endSession({ reason: "sub-agent stopped", stop: true }, caller)).data;
      await service.recordSessionEvent(
        {
          event_type: "subagent_stopped",
          payload: {
            agent_id: input.agent_id,
            agent_type: input.agent_type,
            ...(ended.task_id ? { stopped_work_on: ended.task_id } : {}),
          },
        },
        caller,
      );
    });
    return silent;
  },
};

// PreCompact: plain stdout is appended to the compaction instructions.
export const preCompact: HostStep<object, HookAnswer> = {
  name: "pre-compact",
  read: noInput,
  readOnly: "reads",
  async run(service, _input, caller, access) {
    if (access === "read-write") await collectMemory(service, caller);
    if (!caller.session) return silent;
    // A `claude -p /compact` run compacts a conversation whose previous run ended (and stopped) its
    // work: the task it last worked on is still what the summary must keep.
    const own = service.sessionTask(caller.session);
    own.catch(() => {});
    const text =
      (await activeBriefingText(service, caller.session, [], own)) ??
      (await lastWorkedOnText(service, caller.session, own));
    return text ? { stdout: `Preserve this task briefing in the summary.\n${text}\n` } : silent;
  },
};

export interface CompactFacts {
  trigger: string | null;
  summary_chars: number;
}

export const postCompact: HostStep<CompactFacts, HookAnswer> = {
  name: "post-compact",
  read(input) {
    const value = row(input);
    return {
      trigger: value.trigger == null ? null : text(value, "trigger", SHORT),
      summary_chars: optionalCount(value, "summary_chars") ?? 0,
    };
  },
  readOnly: quiet,
  async run(service, input, caller, access) {
    await oneTransaction(service, access, () =>
      service.recordSessionEvent({ event_type: "session_compacted", payload: { ...input } }, caller),
    );
    return silent;
  },
};

export const sessionEnd: HostStep<{ reason: string }, HookAnswer> = {
  name: "session-end",
  read: (input) => ({ reason: text(row(input), "reason", SHORT) }),
  readOnly: quiet,
  async run(service, input, caller) {
    // Every end stops the work and hands the claim back, `claude -p`'s end of each run (`other`)
    // included: a run that is never resumed must not hold the task for the lease's length. A
    // `--resume` is briefed on the task it last worked on, with the call that starts it again.
    await service.endSession({ reason: input.reason, stop: true }, caller);
    // The conversation is over: whatever else it still holds (claims without work, file
    // reservations) is free at once, not when its lease or heartbeat runs out.
    if (caller.session) await service.heartbeat({ seconds: DEFAULT_HEARTBEAT_SECONDS, ended: true }, caller);
    await collectMemory(service, caller);
    return silent;
  },
};

/** Every hook that works on the store, by name; pre-tool-use's is for file tools (it only leaves a note before Arbeit's). */
export const CLAUDE_STEPS: readonly AnyStep[] = [
  sessionStart,
  userPromptSubmit,
  preToolUse,
  postToolUse,
  hostTask,
  postToolUseFailure,
  subagentStart,
  subagentStop,
  preCompact,
  postCompact,
  sessionEnd,
];
