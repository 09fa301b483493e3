import { type LeaseState, leaseState } from "../domain/claims.js";
import { agentSession } from "../domain/identity.js";
import type { ArbeitEvent, Task } from "../domain/types.js";
import type { SessionState, StoreTx } from "../store/task-store.js";
import { answerOf, answerText, clipText, isAnswerEvent } from "./answers.js";
import type { Caller } from "./caller.js";
import { freedText } from "./edit-refusals.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";
import { sweepExpiredReservations } from "./reservations.js";
import { workingFor } from "./work.js";

/**
 * What happened, since the session last looked, that it should hear before its next step: a
 * person's answer to its question (answers.ts), a person's (or another session's) context on its task, a change of its task's status, its claim
 * lost, a blocker of its task finished. The session's cursor (session_state.cursor_seq, the one
 * arbeit_resume advances) moves past everything read, so each piece of news is told once.
 */

export interface NewsItem {
  seq: number;
  /** The task the news is about; null for a file the session was refused that is free now. */
  task_id: string | null;
  text: string;
  /** A person's word on the task (a user_input, most often the answer to a question): never left out. */
  answer?: true;
}

const EVENTS_READ = 100;
/** The ends of refusing reservations read at once (each a file the session may come back to). */
const FREED_READ = 20;

const who = (event: ArbeitEvent) => event.agent ?? event.session_id ?? "someone";
const statusTo = (event: ArbeitEvent): string | undefined => {
  const changes = event.payload.changes as Record<string, { to?: unknown }> | undefined;
  const to = changes?.status?.to;
  return typeof to === "string" ? to : undefined;
};

/**
 * Where the session's task's claim stands as the news is told: news about claims is told only
 * while it is still true. "Claim lost" only while another session holds the claim (and then of
 * that holder's newest claim alone); "claim broken" or "claim ran out" only while this session
 * does not hold it again.
 */
interface ClaimNow {
  state: LeaseState;
  /** The seq of the current holder's newest task_claimed event among those read. */
  heldSince: number | undefined;
}

function claimNow(task: Task | undefined, session: string, now: string, events: readonly ArbeitEvent[]): ClaimNow {
  const state = task ? leaseState(task, session, now) : "free";
  const claims = events.filter(
    (event) =>
      event.task_id === task?.id && event.event_type === "task_claimed" && event.session_id === task?.claim_session,
  );
  return { state, heldSince: state === "other" ? claims.at(-1)?.seq : undefined };
}

/** The line a session is told for `event`, or undefined when it is not news to it. */
function newsOf(
  event: ArbeitEvent,
  session: string,
  taskId: string,
  blockers: ReadonlyMap<string, Task>,
  claim: ClaimNow,
): string | undefined {
  const { payload } = event;
  if (event.event_type === "claim_expired" && event.task_id === taskId && payload.session === session)
    return claim.state === "mine" ? undefined : `This session's claim on ${taskId} ran out.`;
  if (event.session_id === session) return undefined;
  if (event.task_id === taskId) {
    switch (event.event_type) {
      case "context_added":
        return `${who(event)} added a ${String(payload.type)} to ${taskId}: ${clipText(String(payload.content))}`;
      case "task_updated": {
        const status = statusTo(event);
        return status ? `${who(event)} set ${taskId} to ${status}.` : undefined;
      }
      case "task_claimed":
        return event.seq === claim.heldSince
          ? `${who(event)} claimed ${taskId}: it is no longer this session's.`
          : undefined;
      case "claim_released":
        return payload.reason === "forced" && payload.session === session && claim.state !== "mine"
          ? `${who(event)} broke this session's claim on ${taskId}.`
          : undefined;
      default:
        return undefined;
    }
  }
  if (event.task_id !== null && event.event_type === "task_updated") {
    const status = statusTo(event);
    // Told only while true: a blocker reopened since still blocks.
    if ((status === "completed" || status === "cancelled") && blockers.get(event.task_id)?.status === status)
      return `${event.task_id}, which blocked ${taskId}, is ${status}.`;
  }
  return undefined;
}

export interface NewsOptions {
  /**
   * The newest event seq the host already told the session about, for a host that keeps its own
   * place between steps (the OpenCode plugin): news starts after it, or after the session's
   * cursor when that is later.
   */
  after?: number;
  /**
   * Moves the session's cursor past what was read (default true): hooks keep no state of their
   * own. `"when-told"`: reads without the write lock, and moves the cursor only when there is news
   * to tell, when the session has no cursor yet, or when more events came than one read takes (for
   * a hook that runs after every tool call).
   */
  advance?: boolean | "when-told";
}

/** The news, oldest first, and the newest event seq looked at (a host's `after` for next time). */
export async function sessionNews(
  deps: ServiceDeps,
  caller: Caller,
  options: NewsOptions = {},
): Promise<Result<{ news: NewsItem[]; seq: number }>> {
  const advance = options.advance ?? true;
  // Moving the cursor is a write; a host that keeps its own place (every model call of an
  // OpenCode session) only reads, and takes no write lock.
  if (advance !== true) {
    const read = await deps.store.read(async (tx) => {
      const session = caller.session ?? agentSession(caller.agent);
      const stateRead = tx.sessionState(session);
      const found = await readNews(tx, caller, session, stateRead, options.after);
      return { state: await stateRead, ...found };
    });
    const { state, looked: _, full, lapsed, ...found } = read;
    const quiet = found.news.length === 0 && !full && state !== undefined && !lapsed;
    if (advance === false || quiet) return ok(found);
  }
  // Read again under the write lock: a step that ran meanwhile may have told this news already.
  return mutate(deps, caller, async (w) => {
    const { tx, session, now } = w;
    let stateRead = tx.sessionState(session);
    let read = await readNews(tx, caller, session, stateRead, options.after);
    // A reservation that refused this session ran out unrecorded: it is recorded as expired
    // (reservation_expired, as the next reservation would), and the news read again tells it.
    if (read.lapsed) {
      await sweepExpiredReservations(w);
      stateRead = tx.sessionState(session);
      read = await readNews(tx, caller, session, stateRead, options.after);
    }
    const { looked, full: _, lapsed: __, ...found } = read;
    const state = await stateRead;
    // The cursor moves past what was read, and starts here for a session that never looked.
    if (looked || !state) {
      await tx.saveSessionState(
        session,
        { agent: state?.agent ?? caller.agent, cursor_seq: found.seq, focus_task_id: state?.focus_task_id ?? null },
        now,
      );
    }
    return ok(found);
  });
}

async function readNews(
  tx: StoreTx,
  caller: Caller,
  session: string,
  stateRead: Promise<SessionState | undefined>,
  after: number | undefined,
): Promise<{ news: NewsItem[]; seq: number; looked: boolean; full: boolean; lapsed: boolean }> {
  // Every read goes out together (one round trip on Postgres): those of the session, and those
  // of its task (its blockers, their events), which find the task themselves from the session's
  // rows instead of waiting for them.
  const started = <T>(read: Promise<T>): Promise<T> => {
    read.catch(() => {});
    return read;
  };
  started(stateRead);
  const currentRead = started(tx.maxEventSeq());
  const workingRead = started(workingFor(tx, session, caller.parents));
  const lastRead = started(tx.lastWorkedTask(session));
  const foundRead = started(tx.newsReads(session, after ?? -1, EVENTS_READ));
  const freedRead = started(tx.refusalsFreed(session, after ?? -1, FREED_READ));
  const lapsedRead = started(tx.refusalsLapsed(session, tx.databaseNow()));
  const state = await stateRead;
  const current = await currentRead;
  const since = Math.max(after ?? -1, state?.cursor_seq ?? -1);
  // A session that never looked, and a host that has told it nothing, have no "since": it starts here.
  if (since < 0) return { news: [], seq: current, looked: false, full: false, lapsed: false };
  const lapsed = (await lapsedRead) > 0;
  // Files this session was refused that are free now: told whether or not it has a task.
  const freed: NewsItem[] = (await freedRead)
    .filter(({ ended }) => ended.seq > since)
    .map(({ ended, refused }) => ({ seq: ended.seq, task_id: null, text: freedText(refused) }));
  const taskId = (await workingRead)?.task_id ?? (await lastRead) ?? state?.focus_task_id;
  if (!taskId || since >= current) return { news: freed, seq: current, looked: freed.length > 0, full: false, lapsed };
  let found = await foundRead;
  // A sub-agent's news is its parent's task's; and a write between the reads (each has its own
  // snapshot in a write transaction) may have moved the session: then the task's reads follow.
  if (found.task_id !== taskId || found.since !== since) {
    const taskRead = started(tx.getTask(taskId));
    const blockers = await tx.blockers(taskId);
    const { events, total } = await tx.eventsForTasks([taskId, ...blockers.map((task) => task.id)], since, EVENTS_READ);
    found = { task_id: taskId, since, task: await taskRead, blockers, events, total };
  }
  const { events, total } = found;
  const blockers = new Map(found.blockers.map((task) => [task.id, task]));
  const claim = claimNow(found.task, session, tx.databaseNow(), events);
  // The questions the answers supersede are looked up together.
  const answers = new Map(
    events
      .filter((event) => event.task_id === taskId && isAnswerEvent(event, session))
      .map((event) => [event.seq, started(answerOf(tx, event))]),
  );
  const news: NewsItem[] = [];
  for (const event of events) {
    const answer = answers.get(event.seq);
    if (answer) {
      news.push({ seq: event.seq, task_id: taskId, text: answerText(await answer), answer: true });
      continue;
    }
    const text = newsOf(event, session, taskId, blockers, claim);
    if (text) news.push({ seq: event.seq, task_id: event.task_id ?? taskId, text });
  }
  news.push(...freed);
  news.sort((a, b) => a.seq - b.seq);
  return { news, seq: current, looked: true, full: total > events.length, lapsed };
}
