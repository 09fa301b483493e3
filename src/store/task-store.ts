import type {
  ArbeitEvent,
  ContextEntry,
  ContextType,
  EntityType,
  EventType,
  FileAssociation,
  FileOperation,
  MemoryEntry,
  MemoryScope,
  ProgressItem,
  Relationship,
  RelationshipType,
  RiskLevel,
  SessionLink,
  Task,
  TaskStatus,
  TaskType,
} from "../domain/types.js";
import type { MissionReads } from "./sql/mission.js";
import type { OverviewReads } from "./sql/overview.js";
import type { ReadyWithFiles } from "./sql/ready.js";
import type { ReservationStatements } from "./sql/reservations.js";
import type { NewsReads } from "./sql/session-state.js";

/**
 * The persistence contract every store implements (SQLite now, Postgres for teams). Methods are
 * data access only: the rules that decide what may be written live in the service and domain.
 * All reads see only live rows (not soft-deleted) unless a method says otherwise.
 */
export interface TaskStore {
  /** Runs `fn` in one write transaction, serialised against every other writer. */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Runs `fn` against one consistent snapshot. */
  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Where the data lives, for messages (a file path, or a connection description). */
  readonly location: string;
  /** Why nothing can be written (a read-only file system, say), when that is so: writes are STORE_READ_ONLY. */
  readonly readOnly?: string | undefined;
}

export interface NewTask {
  list_id: string;
  title: string;
  type: TaskType | null;
  status: TaskStatus;
  intent: string | null;
  description: string | null;
  plan: string | null;
  priority: number;
  risk: RiskLevel | null;
  impact: RiskLevel | null;
  owner: string | null;
  active_form: string | null;
  metadata: Record<string, unknown> | null;
  created_at: string;
}

export type TaskPatch = Partial<
  Pick<
    Task,
    | "title"
    | "type"
    | "status"
    | "intent"
    | "description"
    | "plan"
    | "priority"
    | "risk"
    | "impact"
    | "owner"
    | "active_form"
    | "metadata"
  >
>;

export interface RelationshipRow extends Relationship {
  /** True when the task at the far end (seen from the task asked about) is soft-deleted. */
  other_deleted: boolean;
}

/**
 * A place in task order (priority, created_at, id): a page that starts after it is the same
 * however many tasks were created before it since (a keyset page, unlike an offset).
 */
export type TaskKey = readonly [priority: number, created_at: string, id: string];

export interface TaskFilter {
  list_id?: string;
  statuses?: TaskStatus[];
  /** undefined: any parent; null: root tasks only; string: children of that task. */
  parent_id?: string | null;
  type?: TaskType;
  owner?: string;
  /** Tasks whose metadata holds each of these keys with this value (or a list holding it). */
  metadata?: Record<string, MetadataScalar>;
  limit: number;
  offset: number;
  after?: TaskKey;
}

/** A metadata value a listing can filter by. */
export type MetadataScalar = string | number | boolean;

export interface StatusFilter {
  list_id?: string;
  statuses?: TaskStatus[];
  limit: number;
  offset: number;
  after?: TaskKey;
}

export interface NewEvent {
  event_type: EventType;
  entity_type: EntityType;
  entity_id: string;
  task_id: string | null;
  payload: Record<string, unknown>;
  session_id: string | null;
  agent: string | null;
  timestamp: string;
}

export interface ReadyFilter {
  list_id?: string;
  /** The database's time: leases that end by then are free. */
  now: string;
  /** The caller's agent: tasks assigned to it are ready for it, tasks assigned to others are not. */
  agent: string | null;
  /** The caller's session: tasks it holds are ready for it (reads only). */
  session?: string;
  /** Tasks whose metadata holds each of these keys with this value (or a list holding it). */
  metadata?: Record<string, MetadataScalar>;
  limit: number;
  offset: number;
  after?: TaskKey;
}

export interface EventFilter {
  after_seq: number;
  task_id?: string;
  event_types?: EventType[];
  limit: number;
}

export interface ActiveWork {
  session_id: string;
  task_id: string;
  agent: string | null;
  started_at: string;
}

export interface StoreTx extends OverviewReads, MissionReads, ReservationStatements {
  /**
   * The database's time, read as this transaction began (ISO 8601, UTC). Leases run on it, never
   * on a client's clock, so machines whose clocks disagree still agree on who holds a task.
   */
  databaseNow(): string;
  /**
   * True where statements issued before an answer is awaited travel together (Postgres), so a
   * read issued early shares a round trip; false where each runs as it is issued (SQLite), so a
   * read that may turn out unneeded is better issued late, once it is known to be needed.
   */
  readonly batchesStatements: boolean;
  /**
   * Says that this part of the transaction (the function given to read or write, or a call that
   * joined it) has issued every write it makes, and that the reads it issues now, before it waits
   * for an answer, are the last it needs inside the transaction. Where statements travel together
   * (Postgres), once every running part of a write transaction has said so, its COMMIT leaves
   * with those reads rather than a round trip later: if a statement before it fails, nothing
   * commits and the error reaches the caller as it would have. A read issued after that (one that
   * needed an answer of the wave) runs after the COMMIT, in a read-only transaction of its own on
   * its own snapshot, as every statement of a read-committed write does; a write is refused. What
   * the part wrote may have committed by the time it sees its answers, so it must not fail after
   * this for reasons of its own. Where each statement runs as it is issued (SQLite) it does nothing.
   */
  finalWave(): void;

  // tasks
  getTask(id: string): Promise<Task | undefined>;
  /**
   * The live task the session works on now, read without first reading its active work: sent
   * beside `activeWork`, the two take one round trip.
   */
  activeTaskOf(session: string): Promise<Task | undefined>;
  /**
   * The task, read to be changed: on Postgres its row stays locked against other writers until
   * this transaction ends, so a check made on it (version, claim) still holds when the write lands.
   */
  lockTask(id: string): Promise<Task | undefined>;
  getTasks(ids: readonly string[]): Promise<Task[]>;
  /** True when a row with this id exists, deleted or not. */
  taskExists(id: string): Promise<{ exists: boolean; deleted: boolean }>;
  insertTask(task: NewTask): Promise<string>;
  updateTask(id: string, patch: TaskPatch, updatedAt: string): Promise<void>;
  /** Bumps version and updated_at when something read through the task (parent, blockers) changed. */
  touchTask(id: string, updatedAt: string): Promise<void>;
  softDeleteTask(id: string, at: string): Promise<void>;
  listTasks(filter: TaskFilter): Promise<Task[]>;
  /**
   * Open, unblocked, live tasks the caller may take at `now` (the database's time), best first:
   * unowned or assigned to `agent`, with no live lease or (in a read) one held by `session`.
   */
  readyTasks(filter: ReadyFilter): Promise<Task[]>;
  /** readyTasks, each with the files stored for it (written, reserved for it), in one statement. */
  readyWithFiles(filter: ReadyFilter): Promise<ReadyWithFiles[]>;
  blockedTasks(filter: StatusFilter): Promise<Task[]>;
  blockingTasks(filter: StatusFilter): Promise<Task[]>;
  /** Unfinished tasks quiet since `updated_before`, oldest first; a page starts after `after` (updated_at, id). */
  staleTasks(filter: {
    list_id?: string;
    updated_before: string;
    limit: number;
    offset: number;
    after?: readonly [updated_at: string, id: string];
  }): Promise<Task[]>;

  /**
   * Serialises this write with every other write that checks a rule across tasks (one parent,
   * depth, no cycles, no deleting a parent). Call it before reading what such a rule checks.
   */
  lockGraph(): Promise<void>;
  /**
   * Serialises this write with every other write acting in `session` (its turn lasts until this
   * transaction ends). Call it before reading what a rule of one session checks: its one live
   * task, its request ids, the agent it belongs to. Costs no round trip of its own.
   */
  lockSession(session: string): void;

  // hierarchy and dependencies
  children(id: string): Promise<Task[]>;
  /** A page of `id`'s children in task order: at most `limit` after `after`. */
  childrenPage(id: string, limit: number, after?: TaskKey): Promise<Task[]>;
  ancestors(id: string): Promise<Task[]>;
  /** Descendants by depth, then task order; a page starts after `after` (depth, then a TaskKey). */
  descendants(
    id: string,
    limit: number,
    after?: readonly [depth: number, ...TaskKey],
  ): Promise<Array<Task & { depth: number }>>;
  /** Level of a task in its hierarchy: a root is 1. */
  level(id: string): Promise<number>;
  /** Height of the subtree rooted at `id`, counting the task itself as 1. */
  subtreeHeight(id: string): Promise<number>;
  blockers(id: string): Promise<Task[]>;
  blocking(id: string): Promise<Task[]>;
  /** The ids of the live tasks that are children of `id` or that it blocks. */
  childAndDependantIds(id: string): Promise<string[]>;
  /** True when `target` can be reached from `from` along live edges of `type`. */
  reaches(from: string, target: string, type: "blocks" | "parent_of"): Promise<boolean>;

  // relationships
  findRelationship(from: string, to: string, type: RelationshipType): Promise<Relationship | undefined>;
  relationshipsOf(taskId: string): Promise<RelationshipRow[]>;
  insertRelationship(rel: Omit<Relationship, "id">): Promise<string>;
  removeRelationship(id: string, at: string): Promise<void>;

  // context
  insertContext(entry: {
    task_id: string;
    type: ContextType;
    content: string;
    metadata: Record<string, unknown> | null;
    created_at: string;
  }): Promise<string>;
  getContext(id: string): Promise<ContextEntry | undefined>;
  /**
   * The entry, read to be superseded: on Postgres its row stays locked against other writers
   * until this transaction ends, so two writers superseding it at once find it free in turn.
   */
  lockContext(id: string): Promise<ContextEntry | undefined>;
  /** Marks `id` superseded by `by` if it is not already; returns false if it was. */
  markSuperseded(id: string, by: string): Promise<boolean>;
  contextOf(taskId: string, includeSuperseded: boolean): Promise<ContextEntry[]>;
  recentContext(filter: { since: string; task_id?: string; list_id?: string; limit: number }): Promise<ContextEntry[]>;

  // progress
  insertProgress(item: { task_id: string; content: string; completed: boolean; created_at: string }): Promise<string>;
  getProgressItems(ids: readonly string[]): Promise<ProgressItem[]>;
  /** The items, read to be completed: locked on Postgres (in id order) until this transaction ends. */
  lockProgressItems(ids: readonly string[]): Promise<ProgressItem[]>;
  completeProgress(ids: readonly string[], at: string): Promise<void>;
  progressOf(taskId: string): Promise<ProgressItem[]>;
  recentProgress(filter: { since: string; task_id?: string; list_id?: string; limit: number }): Promise<ProgressItem[]>;

  // sessions, active work, files
  linkSession(link: Omit<SessionLink, "id">): Promise<{ id: string; created: boolean }>;
  sessionsOf(taskId: string): Promise<SessionLink[]>;
  activeWork(sessionId: string): Promise<ActiveWork | undefined>;
  startActiveWork(work: ActiveWork): Promise<void>;
  stopActiveWork(sessionId: string, at: string): Promise<void>;
  /** Every session working on the task now, longest first. */
  workingOn(taskId: string): Promise<ActiveWork[]>;
  /** Ends every session's work on the task. */
  stopWorkOn(taskId: string, at: string): Promise<void>;
  /** The live task the session most recently started work on, whether or not it still is. */
  lastWorkedTask(sessionId: string): Promise<string | undefined>;
  /**
   * Inserts the association unless the same task, path, operation and session is recorded;
   * `seen`, when given, is that answer already read (see activeFileSeen).
   */
  insertFileAssociation(file: Omit<FileAssociation, "id">, seen?: boolean): Promise<string | undefined>;
  /**
   * The task of the session's active work, and whether the session has recorded this path and
   * operation on it: read beside the active work, not after it.
   */
  activeFileSeen(
    session: string,
    path: string,
    operation: FileOperation,
  ): Promise<{ task_id: string; seen: boolean } | undefined>;
  filesOf(taskId: string): Promise<FileAssociation[]>;
  countFiles(taskId: string, sessionId: string, since: string): Promise<number>;
  /** Tasks that touched `path`, newest touch first; a page starts after `after` (last_at, id). */
  tasksForFile(
    path: string,
    limit: number,
    after?: readonly [last_at: string, id: string],
  ): Promise<Array<{ task: Task; operations: FileOperation[]; last_at: string }>>;

  // claims
  setClaim(
    id: string,
    claim: {
      owner: string;
      session: string;
      lease_expires_at: string;
      lease_seconds: number;
      claimed_at: string | null;
    },
    at: string,
  ): Promise<void>;
  clearClaim(id: string, at: string): Promise<void>;
  /** Ends the lease but keeps the owner (as an assignment); no version of its own. */
  dropLease(id: string): Promise<void>;
  /**
   * Runs the lease its own length from `now` again if `session` still holds it live and it would
   * end earlier. Not a change of the task: no version, no event. No answer is awaited: it travels
   * with what the transaction sends next (its COMMIT).
   */
  renewLease(id: string, session: string, now: string): void;
  /**
   * A live conversation's heartbeat: each claim `session` holds at `now` runs until `until`, with
   * `seconds` as its lease length from then on (sooner or later than before). No version, no
   * event. Answers how many.
   */
  beatClaims(session: string, now: string, until: string, seconds: number): Promise<number>;
  /** The lease length the task's claim was taken with (null for a claim older than that record). */
  claimLeaseSeconds(id: string): Promise<number | null>;
  /** Tasks whose lease ran out before `now` and still name an owner. */
  expiredClaims(now: string): Promise<ExpiredClaim[]>;
  /** Unfinished tasks assigned to `agent` (owner, no live lease at `now`), best first. */
  assignedTo(agent: string, now: string, limit: number): Promise<Task[]>;
  /** The session's live claims at `now`, most recently claimed first. */
  claimsOf(session: string, now: string): Promise<Task[]>;

  // idempotency
  getIdempotent(key: IdempotencyKey): Promise<IdempotentRecord | undefined>;
  putIdempotent(record: IdempotentRecord & IdempotencyKey & { created_at: string }): Promise<void>;

  // session state
  sessionState(session: string): Promise<SessionState | undefined>;
  /** Saves the focus and moves the cursor forward (never back). */
  saveSessionState(
    session: string,
    state: { agent: string | null; cursor_seq: number; focus_task_id: string | null },
    at: string,
  ): Promise<void>;
  /** Moves the session's focus, leaving its cursor where it is. */
  setFocus(session: string, agent: string | null, taskId: string, at: string): Promise<void>;
  /**
   * The reads of a session's news (src/service/session-news.ts), sent without waiting for the
   * session's own rows: the task it works on (else last worked on, else its focus), that task's
   * blockers, and their events after the later of `after` and the session's cursor.
   */
  newsReads(session: string, after: number, limit: number): Promise<NewsReads>;
  /**
   * Where a session's resume starts, in one read: its state, the task of its live work, the live
   * task it last started work on, and those tasks by id (a deleted one maps to undefined).
   */
  sessionStart(session: string): Promise<SessionStart>;
  maxEventSeq(): Promise<number>;

  // memory
  /**
   * The live entry. In a write it is read to be changed (set again, merged, evicted): on Postgres
   * its row stays locked until this transaction ends, so a writer that merged or deleted it
   * meanwhile is seen, never overwritten with what was read before.
   */
  memoryGet(scope: MemoryScope, scopeId: string, key: string, now: string): Promise<MemoryEntry | undefined>;
  memoryList(filter: {
    scopes: Array<{ scope: MemoryScope; scope_id: string }>;
    prefix?: string;
    now: string;
    limit: number;
    /** `key` (the default) by scope and key; `strength` most reinforced first, then most recently set. */
    order?: "key" | "strength";
  }): Promise<MemoryEntry[]>;
  /** How many live entries one scope holds. */
  memoryCount(scope: MemoryScope, scopeId: string, now: string): Promise<number>;
  /** The `limit` live entries of one scope that matter least: least reinforced, then least recently set. */
  memoryWeakest(scope: MemoryScope, scopeId: string, now: string, limit: number): Promise<MemoryEntry[]>;
  /**
   * Sets the entry. Setting a live key again reinforces it (one more in `reinforced`); a new key,
   * or one whose expiry has passed, starts at 1.
   */
  memoryUpsert(entry: {
    scope: MemoryScope;
    scope_id: string;
    key: string;
    value: unknown;
    expires_at: string | null;
    at: string;
  }): Promise<MemoryEntry>;
  /** Deletes the entry; returns its id, or undefined when there was none. */
  memoryDelete(scope: MemoryScope, scopeId: string, key: string): Promise<string | undefined>;
  /** Deletes entries whose expiry has passed, everywhere or in one scope; returns how many. */
  memorySweep(now: string, only?: { scope: MemoryScope; scope_id: string }): Promise<number>;
  /**
   * Rewrites a live entry as the one a merge keeps: its value, expiry, reinforcement and first
   * setting given, set now. Returns it, or undefined when there is no such live entry.
   */
  memoryReplace(entry: Omit<MemoryEntry, "id" | "updated_at"> & { at: string }): Promise<MemoryEntry | undefined>;
  /** The newest `limit` events of one session of the given types, newest first (a retrospective's material). */
  sessionEvents(session: string, eventTypes: readonly EventType[], limit: number): Promise<ArbeitEvent[]>;

  /** The newest `limit` events after `afterSeq` on any of `taskIds`, oldest first, and how many there were. */
  eventsForTasks(
    taskIds: readonly string[],
    afterSeq: number,
    limit: number,
    /** Also the events of the live children and dependants of this task (childAndDependantIds), read in the same statement. */
    below?: string,
  ): Promise<{ total: number; events: ArbeitEvent[] }>;

  // graph analysis
  /** Live blocks edges between unfinished tasks, optionally within a list or under a parent. */
  blockEdges(filter: { list_id?: string; under?: string }): Promise<Array<[string, string]>>;
  /**
   * How many unfinished tasks in scope have no unfinished blocker, and the best of them to start
   * now (open and unclaimed, in ready order).
   */
  unblockedUnfinished(filter: {
    list_id?: string;
    under?: string;
    limit: number;
    /**
     * How many tasks the whole store's open edges point into, when the caller reads those edges
     * anyway (blockEdges) and counts them: then not counted by a second read of every edge.
     */
    blocked?: Promise<number>;
  }): Promise<{ total: number; tasks: Task[] }>;
  /** Unfinished tasks in scope with a risk or an impact set, in task order. */
  assessedUnfinished(filter: { list_id?: string; under?: string }): Promise<Task[]>;

  // events
  /** Appends an event; the promise is the event with its seq (on Postgres, a round trip to wait for). */
  appendEvent(event: NewEvent): Promise<ArbeitEvent>;
  /**
   * Appends an event whose seq no one needs. On Postgres it travels with what the transaction
   * sends next (at the latest its COMMIT), and its failure fails the transaction.
   */
  recordEvent(event: NewEvent): Promise<void>;
  recentEvents(taskId: string, limit: number): Promise<ArbeitEvent[]>;
  /**
   * The newest `limit` events of the task that take, keep, end or let go of a claim on it
   * (task_claimed, claim_renewed, claim_released, claim_expired, work_stopped), newest first.
   */
  claimHistory(taskId: string, limit: number): Promise<ArbeitEvent[]>;
  listEvents(filter: EventFilter): Promise<ArbeitEvent[]>;
  /** The first `limit` edit_refused events on the reservation, oldest first. */
  editRefusals(reservationId: string, limit: number): Promise<ArbeitEvent[]>;
  /**
   * The newest `limit` ends (reservation_released, reservation_expired) after `afterSeq` of the
   * reservations `session` was refused an edit by, oldest first, each with its refusal's payload
   * (one per refused path).
   */
  refusalsFreed(session: string, afterSeq: number, limit: number): Promise<FreedRefusal[]>;
  /** How many reservations that refused `session` an edit ran out at `now` and are not yet recorded as expired. */
  refusalsLapsed(session: string, now: string): Promise<number>;
  /** The newest `limit` edit_refused events since `since`, each with whether its reservation has ended. */
  recentEditRefusals(since: string, limit: number): Promise<Array<ArbeitEvent & { freed: boolean }>>;
}

/** A reservation that refused a session's edit has ended. */
export interface FreedRefusal {
  ended: ArbeitEvent;
  /** The edit_refused event's payload: path, pattern, holder. */
  refused: Record<string, unknown>;
}

export interface IdempotentRecord {
  tool: string;
  args_hash: string;
  response: string;
}

/** Who a request id belongs to: the session, and the list it was made in ('' for none). */
export interface IdempotencyKey {
  session_id: string;
  list_id: string;
  request_id: string;
}

export interface ExpiredClaim {
  id: string;
  owner: string;
  claim_session: string | null;
  lease_expires_at: string;
}

export interface SessionStart {
  state: SessionState | undefined;
  /** The task the session's live active work names (live or not). */
  working: string | undefined;
  /** The live task the session most recently started work on. */
  last: string | undefined;
  tasks: Map<string, Task | undefined>;
}

export interface SessionState {
  session_id: string;
  agent: string | null;
  cursor_seq: number;
  focus_task_id: string | null;
  updated_at: string;
}
