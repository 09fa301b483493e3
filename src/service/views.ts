import type { ArbeitEvent, CardField, ContextEntry, Task, TaskStatus } from "../domain/types.js";
import type { StoppedRow } from "../store/sql/mission.js";

/**
 * What a person supervising agents reads, view by view (the dashboard's board, tree, graph,
 * agents, activity and inbox): the shapes src/service/overview.ts answers. Types only, so that
 * the page, compiled for the browser, can share them.
 */

/** A task as the board, tree and graph draw it (`blocked`: it waits on an unfinished blocker). */
export interface OverviewTask extends Pick<Task, CardField> {
  /** A live claim: held by `owner` through `session` until `until` (database time). */
  claim: { session: string; until: string } | null;
  /** Open, no unfinished blocker or child, no live claim: an agent could start it now. */
  ready: boolean;
  /** The task's own progress items. */
  progress: { done: number; total: number };
}

/**
 * GET /api/overview?list=<id>: every task (of one list, or all), and the graph over them.
 * With `&since=<seq>` (the seq of an overview the page holds), only what changed after it:
 * `changed` replaces those tasks, `removed` drops tasks deleted or moved to another list.
 */
export interface Overview {
  seq: number;
  /** The database's clock when read: leases count down from it. */
  now: string;
  lists: string[];
  /** Every task; in an answer to `since`, only the tasks that changed. */
  tasks: OverviewTask[];
  /** Set in an answer to `since`: ids of tasks to drop (deleted, or now in another list). */
  removed?: string[];
  /** True in an answer to `since`: merge `tasks` and `removed` into the overview of that seq. */
  partial?: boolean;
  /** Live `blocks` edges among these tasks: [blocker, blocked] (always all of them). */
  edges: Array<[string, string]>;
  /** The longest chain of unfinished blocks edges, first task first. */
  critical_path: string[];
  /** Unfinished tasks that hold up the most others, most first. */
  bottlenecks: Array<{ id: string; blocks: number }>;
}

/** GET /api/agents: who is working now. */
export interface AgentsView {
  /** The store's newest event when read: the view includes every change up to it. */
  seq: number;
  now: string;
  sessions: Array<{
    session_id: string;
    agent: string | null;
    /** The task the session works on, if any. */
    working: { task_id: string; title: string; since: string } | null;
    /** Live claims held by the session. */
    claims: Array<{ task_id: string; title: string; until: string }>;
    /** The session's newest event. */
    last_activity: { at: string; event_type: string; task_id: string | null } | null;
  }>;
  /** Claims whose lease ran out while the task still names its owner: a person may break them. */
  stale_claims: Array<{ task_id: string; title: string; owner: string | null; session: string | null; until: string }>;
}

/**
 * GET /api/activity: the whole event log searched on the server, newest first, a page at a time
 * (filters: task, agent, session, event types, time, text; see readActivity).
 */
export interface ActivityView {
  /** The store's newest event when read. */
  seq: number;
  events: ArbeitEvent[];
  /** The title of each task the page's events name (deleted tasks too). */
  titles: Record<string, string>;
  /** Pass as `before` for the next (older) page; null at the start of history. */
  next_before: number | null;
}

/** GET /api/inbox: every live blocker entry, a question for a person, oldest first. */
export interface InboxView {
  /** The store's newest event when read. */
  seq: number;
  questions: Array<{
    entry: ContextEntry;
    task: { id: string; title: string; status: TaskStatus; list_id: string; version: number };
    /** Who asked: the agent and session that added the blocker. */
    asked_by: { agent: string | null; session: string | null };
    /** Sessions working on the task now: where the answer will be delivered. */
    working: string[];
  }>;
}

/**
 * GET /api/home: the dashboard's first page. First what needs a person, then who works on what
 * now, then how the work goes. One read: every part is of the same moment (`seq`).
 */
/** An edit a host refused: who was refused which file, whose reservation held it, and whether it is free now. */
export interface CollisionRow {
  seq: number;
  at: string;
  session: string | null;
  agent: string | null;
  path: string;
  pattern: string;
  holder: { session: string; agent: string | null; task_id: string | null };
  reservation_id: string;
  /** The reservation has ended since (released or recorded expired). */
  freed: boolean;
}

export interface HomeView {
  seq: number;
  now: string;
  attention: {
    /** Open questions (live blocker entries), oldest first, as the inbox lists them. */
    questions: InboxView["questions"];
    /** Claims whose lease ran out while the task still names its owner. */
    stale_claims: AgentsView["stale_claims"];
    /** Sessions that stopped work on a task in the last week, leaving it unfinished with nobody on it. */
    stopped: StoppedRow[];
    /** Unfinished tasks where live attempt entries pile up (HOME_ATTEMPTS_PILING or more). */
    attempts: Array<{ task_id: string; title: string; attempts: number; last_at: string }>;
    /** Webhooks (`arbeit notify`) whose latest delivery failed after every retry. */
    /** `url` is the webhook's origin and `/…`: the whole URL is often a secret. */
    webhooks: Array<{ id: string; url: string; last_failure: string; last_failure_at: string }>;
  };
  /** Edits hosts refused in the last week (edit_refused), newest first. */
  collisions: CollisionRow[];
  /** Sessions working now, as the agents view lists them. */
  sessions: AgentsView["sessions"];
  /** Each live epic (not cancelled): its direct children finished, of all. */
  epics: Array<{ id: string; title: string; status: TaskStatus; done: number; total: number }>;
  /** The last HOME_DAYS UTC days, oldest first, every day present (zeros included). */
  days: Array<{ day: string; completed: number; decisions: number; blockers: number }>;
}
