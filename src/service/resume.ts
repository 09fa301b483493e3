import { type FocusReason, selectFocus } from "../domain/focus.js";
import { agentSession } from "../domain/identity.js";
import { estimateTokens, truncateText } from "../domain/token-budget.js";
import {
  type ArbeitEvent,
  type ContextEntry,
  DEFAULT_LIST_ID,
  isTerminal,
  type MemoryEntry,
  type Task,
  type TaskSummary,
} from "../domain/types.js";
import type { ResumeInput } from "../schemas/inputs.js";
import type { StoreTx } from "../store/task-store.js";
import { type Answer, answersSince } from "./answers.js";
import type { Caller } from "./caller.js";
import { sweepExpiredClaims } from "./claims.js";
import { reservationsConcerning } from "./file-overlap.js";
import { byRelevance, taskTerms } from "./memory-terms.js";
import { ok, type Result, type ServiceDeps, writeContext } from "./operation.js";
import type { ReservationView } from "./reservations.js";
import { type FileSummary, type ProgressSummary, summarize, summarizeFiles, summarizeProgress } from "./summaries.js";

export type { ResumeInput };

export const DEFAULT_RESUME_TOKENS = 1500;
const EVENTS_FETCHED = 60;
/** The strongest entries of the scopes that apply, ranked by relevance to the focus task; the first MEMORY_SHOWN are briefed. */
const MEMORY_READ = 100;
const MEMORY_SHOWN = 50;
const ANONYMOUS_AGENT = "anonymous";
/** Text kept of each field on the tightest budgets. */
const TIGHT_TEXT = 60;
type TextField = "title" | "intent" | "description" | "plan" | "active_form";
const LONG_FIELDS = ["intent", "description", "plan"] as const;

/** The fields of `task` among `fields` that hold something. */
function present(task: Task, fields: readonly TextField[]): Partial<Record<TextField, string>> {
  return Object.fromEntries(fields.flatMap((field) => (task[field] ? [[field, task[field]]] : [])));
}

/**
 * The focus task as the tightest budgets show it: its summary (no empty or default fields) less
 * who holds it, and its intent, description and plan where set.
 */
export type TaskBrief = Omit<TaskSummary, "owner" | "lease_expires_at" | "claim_session" | "active_form"> &
  Partial<Pick<Task, "intent" | "description" | "plan">>;

/** One event as the brief shows it: what happened, by whom, in a line. */
export interface BriefEvent {
  seq: number;
  at: string;
  agent: string | null;
  event_type: string;
  task_id: string | null;
  detail: string;
}

export interface ResumePacket {
  /**
   * First, because a session must act on them: a person's answers (user_input another session
   * added) on the focus task since the session last looked, each with the question (blocker) it
   * answers. The cursor moves past them, so hooks and news do not tell them again.
   */
  answers: Answer[];
  agent: string;
  /** The focus task in full; in brief (TaskBrief) on a budget too tight for it, as budget.cut says. */
  focus: {
    task: Task | TaskBrief | null;
    reason: FocusReason;
    /** Set when the list asked for had nothing ready, so the focus comes from another list. */
    note?: string;
  };
  parent: TaskSummary | null;
  blockers: TaskSummary[];
  context: ContextEntry[];
  context_history: ContextEntry[];
  progress: ProgressSummary | null;
  files: FileSummary[];
  /**
   * Present when any concern the session's task: its own live file reservations, and other
   * sessions' that cover files the task wrote, reserved or plans to touch (who, what, until when).
   */
  reservations?: ReservationView[];
  memory: MemoryEntry[];
  events: { after_seq: number; total: number; by_other_agents: number; shown: BriefEvent[] };
  cursor: { previous: number; current: number; advanced: boolean };
  budget: { max_tokens: number; estimated_tokens: number; cut: string[] };
}

function briefEvent(event: ArbeitEvent): BriefEvent {
  const { payload } = event;
  let detail: string;
  if (event.event_type === "task_updated" && payload.changes && typeof payload.changes === "object") {
    detail = `changed ${Object.keys(payload.changes).join(", ")}`;
  } else if (event.event_type === "task_created") {
    detail = `created "${(payload.task as Task | undefined)?.title ?? ""}"`;
  } else {
    detail = JSON.stringify(payload);
  }
  return {
    seq: event.seq,
    at: event.timestamp,
    agent: event.agent,
    event_type: event.event_type,
    task_id: event.task_id,
    detail: truncateText(detail, 160),
  };
}

/**
 * The tasks whose changes an agent resuming `focus` should hear about, less the focus's children
 * and dependants: the events' read finds those itself (eventsForTasks' `below`).
 */
function caredAbout(focus: Task | null, claims: readonly Task[]): string[] {
  const ids = new Set(claims.map((task) => task.id));
  if (focus) {
    ids.add(focus.id);
    if (focus.parent_id) ids.add(focus.parent_id);
    for (const id of focus.blocked_by) ids.add(id);
  }
  return [...ids];
}

/**
 * Shrinks the packet to the budget, cutting what matters least first: superseded context, then
 * old events, then long text, then the weakest memory and extra files, then the oldest live
 * context and progress items; on a tight budget the neighbours' summaries, every text to a line,
 * and last the focus task to its brief. A person's answers are never cut.
 */
export function fitToBudget(packet: ResumePacket, maxTokens: number): ResumePacket {
  const cut: string[] = [];
  const sized = () => ({ ...packet, budget: { max_tokens: maxTokens, estimated_tokens: 99999, cut } });
  const over = () => estimateTokens(sized()) > maxTokens;
  /**
   * Drops entries of `list` (a part of the packet) from one end while the packet is over budget.
   * The packet is serialized once; each entry dropped takes its own text and a comma off that
   * length (an entry serializes alone as it does inside its array), so a long list costs one
   * serialization, not one per entry.
   */
  const dropWhileOver = (list: unknown[], from: "shift" | "pop"): number => {
    let length = JSON.stringify(sized()).length;
    let dropped = 0;
    while (Math.ceil(length / 3) > maxTokens && list.length > 0) {
      length -= JSON.stringify(list[from]()).length + (list.length > 0 ? 1 : 0);
      dropped++;
    }
    return dropped;
  };
  if (over() && packet.context_history.length > 0) {
    cut.push(`superseded context (${packet.context_history.length} entries)`);
    packet.context_history = [];
  }
  const droppedEvents = dropWhileOver(packet.events.shown, "shift");
  if (droppedEvents > 0) cut.push(`oldest events (${droppedEvents})`);
  // Long text is cut to 600, then 200 characters; each step is listed only when it cut something.
  const truncate = (limit: number, fields: readonly TextField[]): boolean => {
    const short = (value: string | null) => value && truncateText(value, limit);
    let changed = false;
    // In full until the last step below.
    const task = packet.focus.task as Task | null;
    if (task) {
      const next = { ...task };
      for (const field of fields) {
        const value = short(task[field]);
        if (value !== task[field]) {
          (next as Record<TextField, string | null>)[field] = value;
          changed = true;
        }
      }
      packet.focus.task = next;
    }
    packet.context = packet.context.map((entry) => {
      const content = truncateText(entry.content, limit);
      if (content === entry.content) return entry;
      changed = true;
      return { ...entry, content };
    });
    return changed;
  };
  for (const limit of [600, 200]) {
    if (over() && truncate(limit, LONG_FIELDS)) cut.push(`long fields truncated to ${limit} characters`);
  }
  // Memory comes most relevant first, so it is cut from the end: the least relevant, weakest go.
  for (const [name, list, drop] of [
    ["memory", "memory", "pop"],
    ["files", "files", "shift"],
    ["oldest live context", "context", "shift"],
  ] as const) {
    const dropped = dropWhileOver(packet[list], drop);
    if (dropped > 0) cut.push(`${name} (${dropped})`);
  }
  if (packet.progress && over() && packet.progress.remaining_items.length > 3) {
    cut.push(`remaining progress items beyond 3 (${packet.progress.remaining_items.length - 3})`);
    packet.progress = { ...packet.progress, remaining_items: packet.progress.remaining_items.slice(0, 3) };
  }
  // A tight budget (a few hundred tokens): the neighbours go to their ids, which the focus task
  // names, and its own text to a line each; arbeit_task_get has all of it.
  if (packet.progress && over() && packet.progress.remaining_items.length > 0) {
    cut.push(`remaining progress items (${packet.progress.remaining_items.length})`);
    packet.progress = { ...packet.progress, remaining_items: [] };
  }
  if (over() && packet.blockers.length > 0) {
    cut.push(`blockers (${packet.blockers.length})`);
    packet.blockers = [];
  }
  if (over() && packet.parent) {
    cut.push("parent");
    packet.parent = null;
  }
  if (over() && truncate(TIGHT_TEXT, [...LONG_FIELDS, "title", "active_form"])) {
    cut.push(`text truncated to ${TIGHT_TEXT} characters`);
  }
  // Last, the focus task without its empty and default fields (arbeit_task_get has it whole).
  if (over() && packet.focus.task) {
    const full = packet.focus.task as Task;
    // Who holds it goes too: a focus is never held by anyone but this caller.
    const { owner, lease_expires_at, claim_session, active_form, ...brief } = summarize(full);
    packet.focus.task = { ...brief, ...present(full, LONG_FIELDS) };
    cut.push("focus task in brief");
  }
  packet.budget = { max_tokens: maxTokens, estimated_tokens: 0, cut };
  packet.budget.estimated_tokens = estimateTokens(packet);
  return packet;
}

export async function resume(deps: ServiceDeps, input: ResumeInput, caller: Caller): Promise<Result<ResumePacket>> {
  const agent = caller.agent ?? ANONYMOUS_AGENT;
  const session = caller.session ?? agentSession(caller.agent);
  const maxTokens = input.max_tokens ?? DEFAULT_RESUME_TOKENS;
  const scopeList = input.list_id ?? caller.list_id;
  // A store that cannot be written still briefs: as a peek, whose cursor stays where it was.
  if (deps.store.readOnly !== undefined) input = { ...input, peek: true };
  const run = async (tx: StoreTx): Promise<Result<ResumePacket>> => {
    // Reads that do not depend on each other go out together (one round trip each on Postgres).
    const started = <T>(read: Promise<T>): Promise<T> => {
      read.catch(() => {});
      return read;
    };
    // The session's rows with the tasks they name, its claims and (for a resume that moves the
    // cursor) the newest seq go out with the sweep's read: when the sweep frees nothing they are
    // as after it. A peek reports the cursor where it was, so it needs no newest seq.
    const startRead = started(tx.sessionStart(session));
    const dbNow = tx.databaseNow();
    let claimsRead = started(tx.claimsOf(session, dbNow));
    const newest = () => (input.peek ? Promise.resolve(0) : started(tx.maxEventSeq()));
    let currentRead = newest();
    // Assignments and the best ready task matter only to a session with nothing of its own. Where
    // statements travel together (Postgres) they are asked with the first reads, so such a session
    // costs no round trip more; elsewhere only once found needed.
    const workRead = () => ({
      assigned: started(caller.agent ? tx.assignedTo(caller.agent, dbNow, 5) : Promise.resolve([])),
      ready: started(
        tx.readyTasks({ list_id: scopeList, now: dbNow, agent: caller.agent, session, limit: 1, offset: 0 }),
      ),
    });
    let workReads = tx.batchesStatements ? workRead() : undefined;
    const swept = input.peek ? 0 : await sweepExpiredClaims(writeContext(tx, deps, caller));
    const now = deps.now();
    const { state, working: workingId, last: lastId, tasks: named } = await startRead;
    // Claims the sweep freed change those tasks, the claims and the log: all are read again.
    const candidates = swept === 0 ? named : new Map<string, Task | undefined>();
    if (swept > 0) {
      claimsRead = started(tx.claimsOf(session, dbNow));
      currentRead = newest();
      workReads = undefined;
    }
    const tasks = new Map<string, Promise<Task | undefined>>();
    for (const id of [state?.focus_task_id, workingId, lastId]) {
      if (id && !tasks.has(id))
        tasks.set(id, candidates.has(id) ? Promise.resolve(candidates.get(id)) : started(tx.getTask(id)));
    }
    const taskOf = async (id: string | null | undefined) => (id ? await tasks.get(id) : undefined);
    const previous = await taskOf(state?.focus_task_id);
    const working = await taskOf(workingId);
    const lastStarted = await taskOf(lastId);
    const claims = await claimsRead;
    const known = { session, now: dbNow, previous, working, lastStarted, claims };
    let focus: { task: Task | null; reason: FocusReason; note?: string } = selectFocus({
      ...known,
      assigned: [],
      ready: [],
    });
    if (focus.task === null) {
      const { assigned, ready } = workReads ?? workRead();
      focus = selectFocus({ ...known, assigned: await assigned, ready: await ready });
      // A list with nothing to do is not the end of the work: the rest of the project is offered.
      if (focus.task === null && scopeList !== undefined) {
        const [best] = await tx.readyTasks({ now: dbNow, agent: caller.agent, session, limit: 1, offset: 0 });
        if (best) {
          focus = {
            task: best,
            reason: "best_ready",
            note: `Nothing is ready in list ${scopeList}: this is the best ready task in the rest of the project (list ${best.list_id}).`,
          };
        }
      }
    }
    const task = focus.task;

    const cursor = state?.cursor_seq ?? 0;
    const current = await currentRead;
    const memoryScopes = [
      { scope: "project" as const, scope_id: "" },
      { scope: "list" as const, scope_id: task?.list_id ?? scopeList ?? DEFAULT_LIST_ID },
      { scope: "agent" as const, scope_id: agent },
      ...(task ? [{ scope: "task" as const, scope_id: task.id }] : []),
    ];
    // The cursor and focus are known now: written before the last reads, so that the COMMIT
    // leaves with them (StoreTx.finalWave) rather than a round trip after their answers.
    if (!input.peek) {
      await tx.saveSessionState(
        session,
        { agent: caller.agent, cursor_seq: current, focus_task_id: task?.id ?? null },
        now,
      );
    }
    const allContextRead = started(task ? tx.contextOf(task.id, true) : Promise.resolve([]));
    const parentRead = started(task?.parent_id ? tx.getTask(task.parent_id) : Promise.resolve(undefined));
    const answersRead = started(task ? answersSince(tx, task.id, session, cursor) : Promise.resolve([]));
    const blockersRead = started(task ? tx.blockers(task.id) : Promise.resolve([]));
    const progressRead = started(task ? tx.progressOf(task.id) : Promise.resolve(undefined));
    const filesRead = started(task ? tx.filesOf(task.id) : Promise.resolve([]));
    const memoryRead = started(tx.memoryList({ scopes: memoryScopes, now, limit: MEMORY_READ, order: "strength" }));
    const reservationsRead = started(reservationsConcerning(tx, session, task, filesRead, dbNow));
    const eventsRead = tx.eventsForTasks(caredAbout(task, claims), cursor, EVENTS_FETCHED, task?.id);
    tx.finalWave();
    const events = await eventsRead;
    const allContext = await allContextRead;
    const parent = await parentRead;
    const progress = await progressRead;
    const files = summarizeFiles(await filesRead);
    // Memory that shares the most words with the focus task (title, description, files, metadata
    // labels) comes first; as relevant, the most reinforced, then the most recently set.
    const focusTerms = task ? taskTerms({ ...task, files: files.map((file) => file.file_path) }) : new Set<string>();
    const memory = byRelevance(await memoryRead, focusTerms).slice(0, MEMORY_SHOWN);
    const packet: ResumePacket = {
      answers: await answersRead,
      agent,
      focus,
      parent: parent ? summarize(parent) : null,
      blockers: (await blockersRead).filter((b) => !isTerminal(b.status)).map(summarize),
      context: allContext.filter((entry) => entry.superseded_by === null),
      context_history: allContext.filter((entry) => entry.superseded_by !== null),
      progress: progress ? summarizeProgress(progress) : null,
      files,
      memory,
      events: {
        after_seq: cursor,
        total: events.total,
        by_other_agents: events.events.filter((event) => event.session_id !== session).length,
        shown: events.events.map(briefEvent),
      },
      cursor: { previous: cursor, current: input.peek ? cursor : Math.max(cursor, current), advanced: !input.peek },
      budget: { max_tokens: maxTokens, estimated_tokens: 0, cut: [] },
    };
    const reservations = await reservationsRead;
    if (reservations.length > 0) packet.reservations = reservations;
    return ok(fitToBudget(packet, maxTokens));
  };
  return input.peek ? deps.store.read(run) : deps.store.write(run);
}
