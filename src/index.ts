/**
 * Arbeit as a library: durable task memory for AI agents, in your own process.
 *
 *   import { openArbeit, createArbeitTools, tasksFragment } from "arbeit";
 *
 *   const arbeit = await openArbeit({ create: true });          // .arbeit/arbeit.db in the cwd
 *   const caller = { session: "conv-1", agent: "planner" };
 *   const { data } = await arbeit.createTask({ title: "Fix login" }, caller);
 *   const ready = await arbeit.query({ query: "ready" }, caller);
 *   const tools = createArbeitTools(arbeit, { agent: "planner" }); // AI SDK ToolSet
 *   await arbeit.close();
 *
 * Loading this module loads neither `ai` (an optional peer) nor the MCP SDK. Docs: docs/library.md.
 */
import { ArbeitService } from "./service/arbeit-service.js";
import { initProject, locate, openProject } from "./service/project.js";

export type { ArbeitAiTool, ArbeitToolSet, ArbeitToolsOptions } from "./ai-sdk/create-arbeit-tools.js";
export { createArbeitTools } from "./ai-sdk/create-arbeit-tools.js";
export { ArbeitError, ERROR_CODES, type ErrorBody, type ErrorCode } from "./domain/errors.js";
export {
  type ArbeitEvent,
  CONTEXT_TYPES,
  type ContextEntry,
  type ContextType,
  type EventType,
  type FileAssociation,
  type FileOperation,
  type ProgressItem,
  RELATIONSHIP_TYPES,
  type Relationship,
  type RelationshipType,
  type SessionLink,
  TASK_STATUSES,
  TASK_TYPES,
  type Task,
  type TaskStatus,
  type TaskSummary,
  type TaskType,
  type Warning,
  type WarningCode,
} from "./domain/types.js";
export { taskFragment } from "./fragments/task-fragment.js";
export { tasksFragment } from "./fragments/tasks-fragment.js";
export { signWebhook, verifyWebhook } from "./notify/webhooks.js";
export { type Briefing, INCLUDE_SECTIONS, type IncludeSection } from "./service/briefing.js";
export type { Caller } from "./service/caller.js";
export type { Result, ServiceOptions } from "./service/operation.js";
export { QUERY_NAMES, type QueryName } from "./service/queries.js";
export { type PostgresStoreOptions, PostgresTaskStore } from "./store/postgres/postgres-task-store.js";
export { InMemoryTaskStore, SqliteTaskStore } from "./store/sqlite/sqlite-task-store.js";
export type { StoreTx, TaskStore } from "./store/task-store.js";
export { findTool, TOOL_NAMES, TOOLS } from "./tools/catalogue.js";
export type { ToolAnnotations, ToolContext, ToolDef } from "./tools/define.js";
export { type Envelope, invokeTool } from "./tools/envelope.js";
export { ArbeitService };

export interface OpenArbeitOptions {
  /** Where to look for `.arbeit/` (this directory or the nearest parent holding one). Default: process.cwd(). */
  cwd?: string;
  /** A database file to use instead of the discovered `.arbeit/arbeit.db`. */
  db?: string;
  /** Initialise `.arbeit/` in `cwd` (or create `db`) when no project is found, instead of failing. */
  create?: boolean;
  /** The clock, for tests of time-based rules. */
  now?: () => Date;
}

/**
 * Opens the project's Arbeit service over its SQLite database, found like git finds `.git/`.
 * Throws ArbeitError NOT_INITIALIZED when there is none (unless `create`). Close it when done.
 */
export async function openArbeit(options: OpenArbeitOptions = {}): Promise<ArbeitService> {
  const where = { cwd: options.cwd ?? process.cwd(), db: options.db };
  if (options.create && !locate(where)) await initProject(where);
  return openProject({ ...where, now: options.now });
}
