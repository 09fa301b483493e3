import { type ArbeitEvent, isTerminal, type Task } from "../domain/types.js";
import type { ArbeitService } from "./arbeit-service.js";
import type { Caller } from "./caller.js";

/**
 * News for a session between two of its steps: what other sessions did that changes the work it is
 * doing, told once in a short line a host puts before the next step (OpenCode's system prompt).
 * Only the session's active task counts, and only four things about it:
 *
 * - its claim broken: released by force, run out (and swept), or taken by another session;
 * - a context entry (a note, a decision, a blocker...) added to it by another session;
 * - one of its blockers completed (and whether any blocker is left);
 * - its status changed by another session (completed or cancelled under it, say).
 *
 * Events are read after the latest of `after` (what the host last told the session), the session's
 * cursor (what arbeit_resume last showed it) and the start of its work on the task (what its
 * briefing covered). Nothing is written unless `advance` is set: a host that keeps no state
 * between steps (a hook process) passes it to move the session's cursor past what it was told,
 * which arbeit_resume then counts as seen too.
 */

export interface NewsOptions {
  /** The last event seq the session was told about (a host's own cursor). */
  after?: number;
  /** Saves the session's cursor past the news (for hosts that keep no state between steps). */
  advance?: boolean;
}

export interface SessionNews {
  /** One line for the model, or undefined when nothing relevant happened. */
  text: string | undefined;
  /** The newest event seq looked at: pass it as `after` next time. */
  seq: number;
}

/** Beyond this many items the line says how many more there were. */
const MAX_ITEMS = 4;
const EVENTS_READ = 100;
const CONTENT_CHARS = 160;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

const who = (event: ArbeitEvent) => event.agent ?? event.session_id ?? "someone";

function statusChange(event: ArbeitEvent): { from: unknown; to: unknown } | undefined {
  const changes = event.payload.changes as Record<string, { from: unknown; to: unknown }> | undefined;
  return changes && typeof changes === "object" ? changes.status : undefined;
}

/** What one event means to `session` working on `task`, or undefined when it means nothing new. */
function newsItem(event: ArbeitEvent, session: string, task: Task, blockers: Map<string, Task>): string | undefined {
  if (event.session_id === session) return undefined;
  const { payload } = event;
  if (event.task_id === task.id) {
    switch (event.event_type) {
      case "claim_released":
        return payload.reason === "forced" && payload.session === session
          ? `${who(event)} broke this session's claim on ${task.id} (forced release)`
          : undefined;
      case "claim_expired":
        return payload.session === session ? `this session's claim on ${task.id} ran out` : undefined;
      case "task_claimed":
        return `${task.id} is now claimed by ${who(event)}`;
      case "context_added":
        return `${who(event)} added a ${String(payload.type)} to ${task.id}: ${clip(String(payload.content ?? ""), CONTENT_CHARS)}`;
      case "task_updated": {
        const status = statusChange(event);
        return status ? `${who(event)} set ${task.id} to ${String(status.to)}` : undefined;
      }
      default:
        return undefined;
    }
  }
  const blocker = event.task_id ? blockers.get(event.task_id) : undefined;
  if (blocker && event.event_type === "task_updated" && statusChange(event)?.to === "completed") {
    return `blocker ${blocker.id} "${clip(blocker.title, 80)}" of ${task.id} was completed by ${who(event)}`;
  }
  return undefined;
}

export async function sessionNews(
  service: ArbeitService,
  caller: Caller,
  options: NewsOptions = {},
): Promise<SessionNews> {
  const session = caller.session;
  const read = await service.store.read(async (tx) => {
    const seq = await tx.maxEventSeq();
    if (!session) return { seq, items: [] as string[] };
    const state = await tx.sessionState(session);
    const floor = Math.max(options.after ?? 0, state?.cursor_seq ?? 0);
    const work = await tx.activeWork(session);
    const task = work ? await tx.getTask(work.task_id) : undefined;
    if (!work || !task || seq <= floor) return { seq, items: [] };
    const blockers = new Map((await tx.blockers(task.id)).map((blocker) => [blocker.id, blocker]));
    const { events } = await tx.eventsForTasks([task.id, ...blockers.keys()], floor, EVENTS_READ);
    const items = events
      // Whatever happened before the session took the task up is in its briefing, not news.
      .filter((event) => event.seq <= seq && event.timestamp >= work.started_at)
      .map((event) => newsItem(event, session, task, blockers))
      .filter((item): item is string => item !== undefined);
    const shown = items.slice(0, MAX_ITEMS);
    if (items.length > MAX_ITEMS)
      shown.push(`and ${items.length - MAX_ITEMS} more (arbeit_task_get with recent_events shows them)`);
    if (shown.some((item) => item.startsWith("blocker "))) {
      const open = [...blockers.values()].filter((blocker) => !isTerminal(blocker.status)).length;
      shown.push(open === 0 ? `${task.id} has no open blocker left` : `${open} of its blockers still open`);
    }
    return { seq, items: shown };
  });
  if (options.advance && session && read.seq > 0) {
    await service.store.write(async (tx) => {
      const state = await tx.sessionState(session);
      await tx.saveSessionState(
        session,
        { agent: state?.agent ?? caller.agent, cursor_seq: read.seq, focus_task_id: state?.focus_task_id ?? null },
        new Date().toISOString(),
      );
    });
  }
  if (read.items.length === 0) return { text: undefined, seq: read.seq };
  return { text: `Arbeit news since this session's last step: ${read.items.join("; ")}.`, seq: read.seq };
}

/** Where news starts for a session briefed now: everything up to here is in its briefing. */
export function newsStart(service: ArbeitService): Promise<number> {
  return service.store.read((tx) => tx.maxEventSeq());
}
