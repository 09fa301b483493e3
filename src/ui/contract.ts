/**
 * What the dashboard's server answers and its page reads: the shapes of the JSON behind each
 * view. Types only, shared by both sides (the page is compiled from src/ui/app at build time).
 *
 * Every /api/* route needs the token as `Authorization: Bearer <token>` (the page takes it from
 * the `#token=` of the URL `arbeit ui` prints); the page and its assets load without it.
 * Reads are GET; every write is `POST /api/tools/<tool name>` with the tool's JSON arguments,
 * answered with the tool's envelope, as the agent `human:<name>`.
 */

import type { Envelope } from "../domain/envelope.js";
import type {
  ArbeitEvent,
  ContextEntry,
  ProgressItem,
  RiskLevel,
  SessionLink,
  Task,
  TaskStatus,
  TaskSummary,
  TaskType,
} from "../domain/types.js";
import type { Notice, NoticesView } from "../notify/notice-types.js";
import type { ActivityView, AgentsView, HomeView, InboxView, Overview, OverviewTask } from "../service/views.js";

export type {
  ActivityView,
  AgentsView,
  ArbeitEvent,
  ContextEntry,
  Envelope,
  HomeView,
  InboxView,
  Notice,
  NoticesView,
  Overview,
  OverviewTask,
  RiskLevel,
  Task,
  TaskStatus,
  TaskType,
};

/** GET /api/me: who edits from this page, and whether it may. */
export interface Me {
  /** The agent edits are made as: `human:<name>`. */
  agent: string;
  read_only: boolean;
  engine: "sqlite" | "postgres";
  /** Where the store is: a file path, or the Postgres database without its password. */
  location: string;
  /** The newest event when answered; /api/live reports newer ones. */
  seq: number;
}

/**
 * GET /api/live: Server-Sent Events. An `event: change` with `data: {"seq": n}` whenever the
 * store's newest event moves (any process, any machine); the page then reloads its view's data.
 */
export interface LiveChange {
  seq: number;
}

/** A live file reservation, as the `reservations` query lists it: who holds which files, until when. */
export interface ReservationRow {
  id: string;
  pattern: string;
  mode: "exclusive" | "shared";
  session: string;
  agent: string | null;
  task_id: string | null;
  until: string;
}

/** A task with the briefing sections the task page shows (arbeit_task_get's shapes). */
export interface TaskPageBriefing {
  task: Task;
  context_all?: ContextEntry[];
  progress?: ProgressItem[];
  files?: Array<{ file_path: string; operations: string[]; sessions: number; last_at: string }>;
  sessions?: SessionLink[];
  recent_events?: ArbeitEvent[];
  commits?: Array<{ sha: string; subject: string; files: string[]; session_id: string | null; at: string }>;
  relationships?: Array<{ id: string; from_task_id: string; to_task_id: string; type: string; other_deleted: boolean }>;
  parent?: TaskSummary | null;
  children?: TaskSummary[];
  blocked_by?: TaskSummary[];
  blocking?: TaskSummary[];
}

/** Web pages of the task's files and commits, by recorded path and by sha. */
export interface TaskPageLinks {
  /** The repository's web address (never the remote's URL, which may carry credentials). */
  repository: string;
  files: Record<string, string>;
  commits: Record<string, string>;
}

/**
 * GET /api/task?id=<task id>: the task page in one answer. `links` is null when the project has
 * no git remote `origin` on a host whose pages are known: files and commits are then plain text.
 */
export interface TaskPageView {
  seq: number;
  briefing: TaskPageBriefing;
  /** Reservations made for the task, and other sessions' covering files it wrote, reserved or plans to touch. */
  reservations: ReservationRow[];
  links: TaskPageLinks | null;
}
