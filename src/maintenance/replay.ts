import { HOST_EVENT_TYPES } from "../domain/types.js";

/**
 * Replays the event log into the state it implies, for `arbeit doctor` to compare with the rows.
 * Pure: events in, expected state out. The rules mirror what each service operation writes
 * alongside its event (docs/maintenance.md lists them); an event that cannot be applied (one for
 * a task no event created, a payload missing what the rule needs) is itself a finding.
 */
export interface ReplayEvent {
  seq: number;
  timestamp: string;
  event_type: string;
  entity_id: string;
  task_id: string | null;
  payload: Record<string, unknown>;
}

/**
 * The stored task fields an event history determines. A lease's expiry is not one: the holder's
 * activity renews it without an event of its own.
 */
export const REPLAYED_TASK_FIELDS = [
  "list_id",
  "title",
  "type",
  "status",
  "intent",
  "description",
  "plan",
  "priority",
  "risk",
  "impact",
  "owner",
  "claimed_at",
  "active_form",
  "metadata",
  "version",
  "created_at",
  "updated_at",
  "deleted_at",
] as const;
export type ReplayedTaskField = (typeof REPLAYED_TASK_FIELDS)[number];
export type ReplayTask = Record<ReplayedTaskField, unknown> & { id: string };

export interface ReplayContext {
  task_id: string;
  type: unknown;
  content: unknown;
  metadata: unknown;
  superseded_by: string | null;
  created_at: string;
}

export interface ReplayProgress {
  task_id: string;
  content: unknown;
  completed: boolean;
  created_at: string;
  completed_at: string | null;
}

export interface ReplayState {
  tasks: Map<string, ReplayTask>;
  /** Live edges keyed `from type to`. */
  edges: Set<string>;
  context: Map<string, ReplayContext>;
  progress: Map<string, ReplayProgress>;
  /** Events that could not be applied, in words. */
  problems: Array<{ seq: number; event_type: string; message: string }>;
}

/** The fields task_updated's `changes` may carry as plain values (the rest are derived). */
const NOT_CHANGEABLE = new Set(["list_id", "claimed_at", "version", "created_at", "updated_at", "deleted_at"]);
const SCALAR_FIELDS = new Set<string>(REPLAYED_TASK_FIELDS.filter((field) => !NOT_CHANGEABLE.has(field)));

export function edgeKey(from: string, type: string, to: string): string {
  return `${from} ${type} ${to}`;
}

export function emptyReplay(): ReplayState {
  return { tasks: new Map(), edges: new Set(), context: new Map(), progress: new Map(), problems: [] };
}

type Handler = (state: ReplayState, event: ReplayEvent) => string | undefined;

/** Marks a task changed by `event`: the version moves on (to the payload's, when it names one). */
function bump(task: ReplayTask, event: ReplayEvent): void {
  const stated = event.payload.version;
  task.version = typeof stated === "number" ? stated : Number(task.version) + 1;
  task.updated_at = event.timestamp;
}

function taskOf(state: ReplayState, event: ReplayEvent, id = event.task_id ?? event.entity_id): ReplayTask | string {
  return state.tasks.get(id) ?? `names task ${id}, which no task_created event created`;
}

function asList(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** The edges parent_of/blocks move the version of the task at their `to` end while it is live. */
function touchesEnd(type: unknown): boolean {
  return type === "parent_of" || type === "blocks";
}

const HANDLERS: Record<string, Handler> = {
  task_created(state, event) {
    const task = event.payload.task as Record<string, unknown> | undefined;
    if (typeof task !== "object" || task === null) return "payload has no task";
    const id = event.entity_id;
    // Tasks created before schema v6 have no risk or impact in their event (not assessed), and
    // before v10 no metadata (none).
    const replayed = { id, deleted_at: null, claimed_at: null, risk: null, impact: null, metadata: null } as ReplayTask;
    for (const field of REPLAYED_TASK_FIELDS) if (field in task) replayed[field] = task[field] ?? null;
    replayed.version = typeof task.version === "number" ? task.version : 1;
    replayed.created_at = event.timestamp;
    replayed.updated_at = event.timestamp;
    state.tasks.set(id, replayed);
    if (typeof task.parent_id === "string") state.edges.add(edgeKey(task.parent_id, "parent_of", id));
    for (const blocker of asList(task.blocked_by)) state.edges.add(edgeKey(blocker, "blocks", id));
    return undefined;
  },
  task_updated(state, event) {
    const task = taskOf(state, event);
    if (typeof task === "string") return task;
    const changes = event.payload.changes as Record<string, { from?: unknown; to?: unknown }> | undefined;
    if (typeof changes !== "object" || changes === null) return "payload has no changes";
    for (const [field, change] of Object.entries(changes)) {
      if (SCALAR_FIELDS.has(field)) task[field as ReplayedTaskField] = change.to ?? null;
      else if (field === "parent_id") {
        if (typeof change.from === "string") state.edges.delete(edgeKey(change.from, "parent_of", task.id));
        if (typeof change.to === "string") state.edges.add(edgeKey(change.to, "parent_of", task.id));
      } else if (field === "blocked_by") {
        const before = new Set(asList(change.from));
        const after = new Set(asList(change.to));
        for (const id of before) if (!after.has(id)) state.edges.delete(edgeKey(id, "blocks", task.id));
        for (const id of after) if (!before.has(id)) state.edges.add(edgeKey(id, "blocks", task.id));
      } else return `changes field ${field}, which replay does not know`;
    }
    bump(task, event);
    return undefined;
  },
  task_deleted(state, event) {
    const task = taskOf(state, event);
    if (typeof task === "string") return task;
    task.deleted_at = event.timestamp;
    bump(task, event);
    return undefined;
  },
  work_started(state, event) {
    const task = taskOf(state, event);
    if (typeof task === "string") return task;
    const { status_from, status_to, version } = event.payload;
    if (typeof status_to !== "string" || typeof version !== "number") return "payload lacks status_to or version";
    task.status = status_to;
    if (status_from !== status_to) task.updated_at = event.timestamp;
    task.version = version;
    return undefined;
  },
  relationship_added(state, event) {
    const { from_task_id: from, to_task_id: to, type } = event.payload;
    if (typeof from !== "string" || typeof to !== "string" || typeof type !== "string")
      return "payload lacks from_task_id, to_task_id or type";
    state.edges.add(edgeKey(from, type, to));
    if (touchesEnd(type)) {
      const task = taskOf(state, event, to);
      if (typeof task === "string") return task;
      bump(task, event);
    }
    return undefined;
  },
  relationship_removed(state, event) {
    const { from_task_id: from, to_task_id: to, type } = event.payload;
    if (typeof from !== "string" || typeof to !== "string" || typeof type !== "string")
      return "payload lacks from_task_id, to_task_id or type";
    state.edges.delete(edgeKey(from, type, to));
    const task = state.tasks.get(to);
    if (touchesEnd(type) && task && task.deleted_at === null) bump(task, event);
    return undefined;
  },
  task_claimed: claimed,
  claim_renewed: claimed,
  claim_released: released,
  claim_expired: released,
  context_added(state, event) {
    if (event.task_id === null) return "has no task_id";
    const { type, content, metadata } = event.payload;
    state.context.set(event.entity_id, {
      task_id: event.task_id,
      type,
      content,
      metadata: metadata ?? null,
      superseded_by: null,
      created_at: event.timestamp,
    });
    return undefined;
  },
  context_superseded(state, event) {
    const entry = state.context.get(event.entity_id);
    if (!entry) return `supersedes ${event.entity_id}, which no context_added event created`;
    entry.superseded_by = String(event.payload.superseded_by);
    return undefined;
  },
  progress_added(state, event) {
    if (event.task_id === null) return "has no task_id";
    const items = event.payload.items;
    if (!Array.isArray(items)) return "payload has no items";
    for (const item of items as Array<{ id: string; content: unknown; completed: unknown }>) {
      const completed = item.completed === true;
      state.progress.set(item.id, {
        task_id: event.task_id,
        content: item.content,
        completed,
        created_at: event.timestamp,
        completed_at: completed ? event.timestamp : null,
      });
    }
    return undefined;
  },
  progress_completed(state, event) {
    for (const id of asList(event.payload.item_ids)) {
      const item = state.progress.get(id);
      if (!item) return `completes ${id}, which no progress_added event created`;
      item.completed = true;
      item.completed_at = event.timestamp;
    }
    return undefined;
  },
};

function claimed(state: ReplayState, event: ReplayEvent): string | undefined {
  const task = taskOf(state, event);
  if (typeof task === "string") return task;
  const { owner, lease_expires_at } = event.payload;
  if (typeof owner !== "string" || typeof lease_expires_at !== "string")
    return "payload lacks owner or lease_expires_at";
  task.owner = owner;
  // A new claim stamps claimed_at; a renewal keeps it, and a release leaves it as history.
  if (event.event_type === "task_claimed") task.claimed_at = event.timestamp;
  bump(task, event);
  return undefined;
}

function released(state: ReplayState, event: ReplayEvent): string | undefined {
  const task = taskOf(state, event);
  if (typeof task === "string") return task;
  task.owner = null;
  bump(task, event);
  return undefined;
}

/** Event types that change nothing replay compares (sessions, files, memory, tokens, what hosts saw). */
const NEUTRAL = new Set<string>([
  "work_stopped",
  "file_tracked",
  "memory_set",
  "memory_deleted",
  "token_created",
  "token_revoked",
  "files_reserved",
  "reservation_released",
  "reservation_expired",
  "edit_refused",
  ...HOST_EVENT_TYPES,
]);

export function applyEvent(state: ReplayState, event: ReplayEvent): void {
  const handler = HANDLERS[event.event_type];
  if (!handler) {
    if (!NEUTRAL.has(event.event_type))
      state.problems.push({ seq: event.seq, event_type: event.event_type, message: "unknown event type" });
    return;
  }
  const problem = handler(state, event);
  if (problem) state.problems.push({ seq: event.seq, event_type: event.event_type, message: problem });
}
