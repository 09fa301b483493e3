import { activeBriefingText } from "../fragments/briefing-text.js";
import { sessionStartContext } from "../fragments/session-start.js";
import { checkEditStep } from "../remote/edit-check.js";
import { commitInput, list, noInput, optionalCount, row, text } from "../remote/step-input.js";
import type { AnyStep, HostStep } from "../remote/steps.js";
import type { CommitInput } from "../service/commits.js";
import { recordPlan } from "../service/host-plans.js";
import { mirrorHostSteps } from "../service/host-steps.js";
import { fitBriefing, newsLine } from "./system-prompt.js";
import type { Todo } from "./todos.js";

/**
 * The store steps of the OpenCode plugin's hooks (see src/remote/steps.ts); file tracking is the
 * shared track-files step. A read-only token's plugin writes nothing: it is briefed (without
 * moving the session's news cursor) and records nothing.
 */

const SHORT = 200;
/** More todos than any list holds; each is cut to a progress item's length when mirrored. */
const MAX_TODOS = 1_000;
const TODO_CHARS = 10_000;

/** A commit a bash call made, as git records it, on the session's active task. */
export const recordCommitStep: HostStep<{ commit: CommitInput }, object> = {
  name: "record-commit",
  read(input) {
    return { commit: commitInput(row(input).commit, "commit") };
  },
  readOnly: { answer: {} },
  async run(service, input, caller) {
    await service.recordCommit(input.commit, caller);
    return {};
  },
};

/** The session's todo list mirrored as progress of its active task (src/service/host-steps.ts). */
export const mirrorTodosStep: HostStep<{ todos: Todo[] }, object> = {
  name: "mirror-todos",
  read(input) {
    return {
      todos: list(row(input), "todos", MAX_TODOS, (entry, field) => {
        const todo = row(entry, field);
        return { content: text(todo, "content", TODO_CHARS), status: text(todo, "status", SHORT) };
      }),
    };
  },
  readOnly: { answer: {} },
  async run(service, input, caller) {
    await mirrorHostSteps(service, caller, input.todos);
    return {};
  },
};

/** The longest plan taken; the store keeps less of it. */
export const PLAN_CHARS = 100_000;

/** A plan the person approved at plan_exit, recorded as work (src/service/host-plans.ts). */
export const recordPlanStep: HostStep<{ plan: string }, { task_id?: string }> = {
  name: "record-plan",
  read: (input) => ({ plan: text(row(input), "plan", PLAN_CHARS) }),
  readOnly: { answer: {} },
  async run(service, input, caller) {
    const recorded = await recordPlan(service, caller, input.plan, "OpenCode");
    return recorded ? { task_id: recorded.task_id } : {};
  },
};

/** What a session's next system prompt needs: its briefing (first call), else news after `seq`. */
export interface PromptPart {
  /** The briefing, cut to fit a system prompt: only when no `after` was given. */
  briefing?: string;
  /** The newest event the session has now been told about. */
  seq: number;
  /** News since `after`, one line; absent when there is none. */
  news?: string;
}

export const systemPromptStep: HostStep<{ after?: number }, PromptPart> = {
  name: "system-prompt",
  read: (input) => ({ after: optionalCount(row(input), "after") }),
  readOnly: "reads",
  async run(service, input, caller, access) {
    // Moves the session's cursor past what it tells (read-only tokens move nothing): the next
    // OpenCode process on this session, whose briefing starts from the cursor, and arbeit_resume
    // do not tell it again.
    const advance = access === "read-only" ? false : ("when-told" as const);
    if (input.after === undefined) {
      const start = await sessionStartContext(service, caller, { advanceNews: advance });
      return { briefing: fitBriefing(start.text), seq: start.seq };
    }
    const { news, seq } = (await service.sessionNews(caller, { advance, after: input.after })).data;
    const line = newsLine(news);
    return line ? { seq, news: line } : { seq };
  },
};

/**
 * What a compaction must keep: the session's active task's briefing (else its nearest parent's),
 * and once per session its retrospective (src/service/retrospective.ts). OpenCode hands both to
 * the model that writes the summary, which is all the agent sees of the conversation afterwards:
 * the offer reaches the agent through the summary, with the call that keeps a lesson.
 */
export const compactionStep: HostStep<object, { text?: string }> = {
  name: "compaction-briefing",
  read: noInput,
  readOnly: "reads",
  async run(service, _input, caller, access) {
    if (!caller.session) return {};
    const briefing = await activeBriefingText(service, caller.session, caller.parents);
    const offer = access === "read-write" ? (await service.offerRetrospective("compaction", caller)).data.text : null;
    const parts = [
      briefing,
      offer && `Carry this retrospective into the summary word for word, for the agent to act on:\n${offer}`,
    ].filter((part) => part);
    return parts.length > 0 ? { text: parts.join("\n\n") } : {};
  },
};

export const OPENCODE_STEPS: readonly AnyStep[] = [
  recordCommitStep,
  mirrorTodosStep,
  recordPlanStep,
  systemPromptStep,
  compactionStep,
  checkEditStep,
];
