import type { ArbeitEvent } from "../domain/types.js";
import type { Caller } from "./caller.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";
import { workingFor } from "./work.js";

/**
 * What happened, since the session last looked, that it should hear before its next step: a
 * person's (or another session's) context on its task, a change of its task's status, its claim
 * lost, a blocker of its task finished. The session's cursor (session_state.cursor_seq, the one
 * arbeit_resume advances) moves past everything read, so each piece of news is told once.
 */

export interface NewsItem {
  seq: number;
  task_id: string;
  text: string;
}

const EVENTS_READ = 100;
const CONTENT_CHARS = 400;

const clip = (text: string) => (text.length <= CONTENT_CHARS ? text : `${text.slice(0, CONTENT_CHARS - 1)}…`);
const who = (event: ArbeitEvent) => event.agent ?? event.session_id ?? "someone";
const statusTo = (event: ArbeitEvent): string | undefined => {
  const changes = event.payload.changes as Record<string, { to?: unknown }> | undefined;
  const to = changes?.status?.to;
  return typeof to === "string" ? to : undefined;
};

/** The line a session is told for `event`, or undefined when it is not news to it. */
function newsOf(
  event: ArbeitEvent,
  session: string,
  taskId: string,
  blockers: ReadonlySet<string>,
): string | undefined {
  if (event.session_id === session) return undefined;
  const { payload } = event;
  if (event.task_id === taskId) {
    switch (event.event_type) {
      case "context_added":
        return `${who(event)} added a ${String(payload.type)} to ${taskId}: ${clip(String(payload.content))}`;
      case "task_updated": {
        const status = statusTo(event);
        return status ? `${who(event)} set ${taskId} to ${status}.` : undefined;
      }
      case "task_claimed":
        return `${who(event)} claimed ${taskId}: it is no longer this session's.`;
      case "claim_released":
        return payload.reason === "forced" ? `${who(event)} broke this session's claim on ${taskId}.` : undefined;
      default:
        return undefined;
    }
  }
  if (event.task_id !== null && blockers.has(event.task_id) && event.event_type === "task_updated") {
    const status = statusTo(event);
    if (status === "completed" || status === "cancelled")
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
  /** Moves the session's cursor past what was read (default true): hooks keep no state of their own. */
  advance?: boolean;
}

/** The news, oldest first, and the newest event seq looked at (a host's `after` for next time). */
export async function sessionNews(
  deps: ServiceDeps,
  caller: Caller,
  options: NewsOptions = {},
): Promise<Result<{ news: NewsItem[]; seq: number }>> {
  const advance = options.advance ?? true;
  return mutate(deps, caller, async ({ tx, session, now }) => {
    const state = await tx.sessionState(session);
    const current = await tx.maxEventSeq();
    const save = async (focus: string | null) => {
      if (!advance) return;
      await tx.saveSessionState(
        session,
        { agent: state?.agent ?? caller.agent, cursor_seq: current, focus_task_id: focus },
        now,
      );
    };
    const since = Math.max(options.after ?? -1, state?.cursor_seq ?? -1);
    // A session that never looked, and a host that has told it nothing, have no "since": it starts here.
    if (since < 0) {
      await save(null);
      return ok({ news: [], seq: current });
    }
    const taskId =
      (await workingFor(tx, session, caller.parents))?.task_id ??
      (await tx.lastWorkedTask(session)) ??
      state?.focus_task_id;
    if (!taskId || since >= current) return ok({ news: [], seq: current });
    const blockers = new Set((await tx.blockers(taskId)).map((task) => task.id));
    const { events } = await tx.eventsForTasks([taskId, ...blockers], since, EVENTS_READ);
    const news: NewsItem[] = [];
    for (const event of events) {
      const text =
        event.event_type === "claim_expired" && event.task_id === taskId && event.payload.session === session
          ? `This session's claim on ${taskId} ran out.`
          : newsOf(event, session, taskId, blockers);
      if (text) news.push({ seq: event.seq, task_id: event.task_id ?? taskId, text });
    }
    await save(state?.focus_task_id ?? null);
    return ok({ news, seq: current });
  });
}
