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
import type { ArbeitEvent, ContextEntry, RiskLevel, Task, TaskStatus, TaskType } from "../domain/types.js";
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
