import type { ArbeitEvent } from "../domain/types.js";
import type { StoreTx } from "../store/task-store.js";

/**
 * A person's answers to a session's questions. A live `blocker` context entry on a task is a
 * question; a person answers it with a `user_input` entry that supersedes it (the dashboard adds
 * one as `human:<name>`). Any `user_input` another session adds to a task is a person's word on
 * it, and is told to the session working on the task before anything else: with the question it
 * answers when it superseded a blocker.
 */

export interface Answer {
  /** The event that added it: answers since a session's cursor are those after it. */
  seq: number;
  at: string;
  /** The user_input entry. */
  entry_id: string;
  task_id: string;
  /** Who answered: the agent (`human:alice`), else the session. */
  by: string;
  content: string;
  /** The blocker entry it superseded, or null when it answers no question. */
  question: { entry_id: string; content: string } | null;
}

/** The most context entries arbeit_resume reads for answers since the session's cursor. */
const ENTRIES_READ = 100;
const QUESTION_CHARS = 200;
const CONTENT_CHARS = 400;

export const clipText = (text: string, max: number = CONTENT_CHARS) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/** Whether `event` is another session's `user_input` added to a task. */
export function isAnswerEvent(event: ArbeitEvent, session: string): boolean {
  return (
    event.event_type === "context_added" &&
    event.payload.type === "user_input" &&
    event.task_id !== null &&
    event.session_id !== session
  );
}

/** The answer `event` (see isAnswerEvent) adds, with the blocker it superseded looked up. */
export async function answerOf(tx: StoreTx, event: ArbeitEvent): Promise<Answer> {
  const supersedes = event.payload.supersedes;
  const old = typeof supersedes === "string" ? await tx.getContext(supersedes) : undefined;
  return {
    seq: event.seq,
    at: event.timestamp,
    entry_id: event.entity_id,
    task_id: event.task_id ?? "",
    by: event.agent ?? event.session_id ?? "someone",
    content: String(event.payload.content),
    question: old?.type === "blocker" ? { entry_id: old.id, content: old.content } : null,
  };
}

/** The line a model is told for `answer`. */
export function answerText(answer: Answer): string {
  const content = clipText(answer.content);
  if (!answer.question) return `${answer.by} added a user_input to ${answer.task_id}: ${content}`;
  const question = clipText(answer.question.content.replace(/\s+/g, " "), QUESTION_CHARS);
  return `${answer.by} answered the question on ${answer.task_id} ("${question}"): ${content}`;
}

/** Other sessions' answers on `taskId` after event `afterSeq`, oldest first. */
export async function answersSince(tx: StoreTx, taskId: string, session: string, afterSeq: number): Promise<Answer[]> {
  const events = await tx.listEvents({
    after_seq: afterSeq,
    task_id: taskId,
    event_types: ["context_added"],
    limit: ENTRIES_READ,
  });
  // The questions they answer are looked up together (one round trip on Postgres).
  return Promise.all(events.filter((event) => isAnswerEvent(event, session)).map((event) => answerOf(tx, event)));
}
