import type { ArbeitEvent } from "../domain/types.js";
import type { StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";
import { workingFor } from "./work.js";

/**
 * Commits made while a session works on a task, recorded on that task. A host that sees a commit
 * happen (Claude Code's PostToolUse for Bash, OpenCode's tool hook) reads it from git and hands
 * it here; the record is a `commit_recorded` event, so it needs no table of its own.
 */

export interface CommitInput {
  sha: string;
  subject: string;
  /** The paths the commit changed, relative to the repository root. */
  files: string[];
}

export interface RecordedCommit extends CommitInput {
  session_id: string | null;
  at: string;
}

/** Enough for any real commit; a commit of thousands of files keeps its first ones and a count. */
const MAX_FILES = 200;
const MAX_SUBJECT = 500;
/** The commits include shows at most this many, the newest. */
export const COMMITS_SHOWN = 50;

export type CommitResult =
  | { recorded: true; task_id: string }
  | { recorded: false; reason: "no_active_work" | "already_recorded"; task_id?: string };

export async function recordCommit(
  deps: ServiceDeps,
  input: CommitInput,
  caller: Caller,
): Promise<Result<CommitResult>> {
  return mutate(deps, caller, async (w) => {
    const active = await workingFor(w.tx, w.session, caller.parents);
    if (!active) return ok({ recorded: false, reason: "no_active_work" } as const);
    const task_id = active.task_id;
    // A hook may see one commit twice (a retried call, two hosts, two sessions at work on the
    // task): the task lists it once. The task is locked first, so that of two recording it at
    // once the second reads the first's record; the read goes out with the lock, in its round trip.
    const locked = w.tx.lockTask(task_id);
    locked.catch(() => {});
    const recorded = commitEvents(w.tx, task_id);
    recorded.catch(() => {});
    await locked;
    if ((await recorded).some((event) => event.payload.sha === input.sha))
      return ok({ recorded: false, reason: "already_recorded", task_id } as const);
    w.touched(task_id, active.session_id);
    const files = input.files.slice(0, MAX_FILES);
    await w.emit({
      event_type: "commit_recorded",
      entity_type: "task",
      entity_id: task_id,
      task_id,
      payload: {
        sha: input.sha,
        subject: input.subject.slice(0, MAX_SUBJECT),
        files,
        ...(input.files.length > files.length ? { files_not_listed: input.files.length - files.length } : {}),
      },
    });
    return ok({ recorded: true, task_id } as const);
  });
}

function commitEvents(tx: StoreTx, taskId: string): Promise<ArbeitEvent[]> {
  return tx.listEvents({ after_seq: 0, task_id: taskId, event_types: ["commit_recorded"], limit: 10_000 });
}

/** The task's recorded commits, oldest first (the newest COMMITS_SHOWN). */
export async function commitsOf(tx: StoreTx, taskId: string): Promise<RecordedCommit[]> {
  return (await commitEvents(tx, taskId)).slice(-COMMITS_SHOWN).map((event) => ({
    sha: String(event.payload.sha),
    subject: String(event.payload.subject ?? ""),
    files: Array.isArray(event.payload.files) ? event.payload.files.map(String) : [],
    session_id: event.session_id,
    at: event.timestamp,
  }));
}
