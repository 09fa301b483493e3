import { criticalPath, topBottlenecks } from "../domain/graph.js";
import type { OverviewRow } from "../store/sql/overview.js";
import type { StoreTx, TaskStore } from "../store/task-store.js";
import type { AgentsView, InboxView, Overview, OverviewTask } from "./views.js";

/**
 * What a person supervising agents reads (the dashboard's views), each in one read transaction
 * on the database's clock. Reads only: every change a person makes goes through the tools.
 */

const BOTTLENECKS_SHOWN = 10;
/** A session heard from within this long counts as live on the agents view. */
const LIVE_WINDOW_MS = 60 * 60 * 1000;

/** More events than this since a page's overview, and it gets the whole overview again. */
const PARTIAL_EVENTS_MAX = 2000;

function card(row: OverviewRow, now: string): OverviewTask {
  const claimed = row.lease_expires_at !== null && row.lease_expires_at > now;
  return {
    id: row.id,
    list_id: row.list_id,
    title: row.title,
    type: row.type,
    status: row.status,
    priority: row.priority,
    owner: row.owner,
    parent_id: row.parent_id,
    risk: row.risk,
    impact: row.impact,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
    claim: claimed && row.claim_session ? { session: row.claim_session, until: row.lease_expires_at! } : null,
    // What any agent could start now: open, nothing unfinished before it, held by nobody.
    ready: row.status === "open" && !row.blocked && row.open_children === 0 && !claimed,
    blocked: row.blocked,
    progress: { done: row.progress_done, total: row.progress_total },
  };
}

/**
 * The overview of one list (or all), in one read. Given `since` (the seq of an overview the
 * caller holds), only the tasks whose cards may have changed after it, so that a page at 10,000
 * tasks redraws what changed without reading everything again.
 */
export async function readOverview(store: TaskStore, listId?: string, since?: number): Promise<Overview> {
  return store.read(async (tx) => {
    const now = tx.databaseNow();
    const seq = await tx.maxEventSeq();
    const scope = listId === undefined ? {} : { list_id: listId };
    const open = await tx.blockEdges(scope);
    const graph = {
      seq,
      now,
      lists: await tx.listIds(),
      edges: await tx.overviewEdges(listId),
      critical_path: criticalPath(open),
      bottlenecks: topBottlenecks(open, BOTTLENECKS_SHOWN).map(({ id, blocks }) => ({ id, blocks })),
    };
    if (since !== undefined && since <= seq && seq - since <= PARTIAL_EVENTS_MAX) {
      const ids = await tx.overviewChangedSince(since);
      const rows = (await tx.overviewTasksById(ids)).filter((row) => listId === undefined || row.list_id === listId);
      const kept = new Set(rows.map((row) => row.id));
      return {
        ...graph,
        partial: true,
        tasks: rows.map((row) => card(row, now)),
        removed: ids.filter((id) => !kept.has(id)),
      };
    }
    return { ...graph, tasks: (await tx.overviewTasks(listId)).map((row) => card(row, now)) };
  });
}

export function readAgents(store: TaskStore): Promise<AgentsView> {
  return store.read(agentsIn);
}

/** The agents view, read inside the caller's transaction. */
export async function agentsIn(tx: StoreTx): Promise<AgentsView> {
  const now = tx.databaseNow();
  const seq = await tx.maxEventSeq();
  const since = new Date(Date.parse(now) - LIVE_WINDOW_MS).toISOString();
  const [working, live, stale, heard] = [
    await tx.workingNow(now),
    await tx.claimsAt(now, true),
    await tx.claimsAt(now, false),
    await tx.sessionsHeardSince(since),
  ];
  const sessions = new Map<string, AgentsView["sessions"][number]>();
  const session = (id: string, agent: string | null) => {
    let entry = sessions.get(id);
    if (!entry) {
      entry = { session_id: id, agent, working: null, claims: [], last_activity: null };
      sessions.set(id, entry);
    }
    entry.agent ??= agent;
    return entry;
  };
  for (const event of heard) {
    session(event.session_id!, event.agent).last_activity = {
      at: event.timestamp,
      event_type: event.event_type,
      task_id: event.task_id,
    };
  }
  for (const work of working) {
    session(work.session_id, work.agent).working = {
      task_id: work.task_id,
      title: work.title,
      since: work.started_at,
    };
  }
  for (const claim of live) {
    if (claim.session)
      session(claim.session, claim.owner).claims.push({
        task_id: claim.task_id,
        title: claim.title,
        until: claim.until,
      });
  }
  // Working sessions first, then by latest activity.
  const order = (entry: AgentsView["sessions"][number]) => entry.last_activity?.at ?? entry.working?.since ?? "";
  const listed = [...sessions.values()].sort(
    (a, b) =>
      Number(b.working !== null) - Number(a.working !== null) ||
      order(b).localeCompare(order(a)) ||
      a.session_id.localeCompare(b.session_id),
  );
  return { seq, now, sessions: listed, stale_claims: stale };
}

export function readInbox(store: TaskStore): Promise<InboxView> {
  return store.read(inboxIn);
}

/** The inbox, read inside the caller's transaction. */
export async function inboxIn(tx: StoreTx): Promise<InboxView> {
  const seq = await tx.maxEventSeq();
  const questions = await tx.openQuestions();
  const working = new Map<string, string[]>();
  for (const { task } of questions) {
    if (!working.has(task.id))
      working.set(
        task.id,
        (await tx.workingOn(task.id)).map((work) => work.session_id),
      );
  }
  return {
    seq,
    questions: questions.map((question) => ({ ...question, working: working.get(question.task.id) ?? [] })),
  };
}

/** The newest event's seq: it moves whenever any process, on any machine, changes the store. */
export function newestSeq(store: TaskStore): Promise<number> {
  return store.read((tx) => tx.maxEventSeq());
}
