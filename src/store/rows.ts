import type {
  ArbeitEvent,
  ContextEntry,
  FileAssociation,
  MemoryEntry,
  ProgressItem,
  Relationship,
  SessionLink,
  Task,
} from "../domain/types.js";
import type { RelationshipRow } from "./task-store.js";

/** Decoding of raw SQLite rows into the wire types. */

function parseObject(text: unknown): Record<string, unknown> | null {
  if (typeof text !== "string") return null;
  return JSON.parse(text) as Record<string, unknown>;
}

export type RawRow = Record<string, unknown>;

export function toTask(row: RawRow): Task {
  return {
    id: row.id as string,
    list_id: row.list_id as string,
    title: row.title as string,
    type: (row.type as Task["type"]) ?? null,
    status: row.status as Task["status"],
    intent: (row.intent as string | null) ?? null,
    description: (row.description as string | null) ?? null,
    plan: (row.plan as string | null) ?? null,
    parent_id: (row.parent_id as string | null) ?? null,
    blocked_by: row.blocked_by_json ? (JSON.parse(row.blocked_by_json as string) as string[]) : [],
    blocks: row.blocks_json ? (JSON.parse(row.blocks_json as string) as string[]) : [],
    blocked: Boolean(row.blocked),
    priority: Number(row.priority),
    risk: (row.risk as Task["risk"]) ?? null,
    impact: (row.impact as Task["impact"]) ?? null,
    owner: (row.owner as string | null) ?? null,
    lease_expires_at: (row.lease_expires_at as string | null) ?? null,
    claim_session: (row.claim_session as string | null) ?? null,
    active_form: (row.active_form as string | null) ?? null,
    metadata: parseObject(row.metadata),
    version: Number(row.version),
    created_at: row.created_at as string,
    updated_at: row.updated_at as string,
  };
}

export function toContext(row: RawRow): ContextEntry {
  return {
    id: row.id as string,
    task_id: row.task_id as string,
    type: row.type as ContextEntry["type"],
    content: row.content as string,
    metadata: parseObject(row.metadata),
    superseded_by: (row.superseded_by as string | null) ?? null,
    created_at: row.created_at as string,
  };
}

export function toProgress(row: RawRow): ProgressItem {
  return {
    id: row.id as string,
    task_id: row.task_id as string,
    content: row.content as string,
    completed: Boolean(row.completed),
    created_at: row.created_at as string,
    completed_at: (row.completed_at as string | null) ?? null,
  };
}

export function toRelationship(row: RawRow): Relationship {
  return {
    id: row.id as string,
    from_task_id: row.from_task_id as string,
    to_task_id: row.to_task_id as string,
    type: row.type as Relationship["type"],
    metadata: parseObject(row.metadata),
    created_at: row.created_at as string,
  };
}

export function toRelationshipRow(row: RawRow): RelationshipRow {
  return { ...toRelationship(row), other_deleted: Boolean(row.other_deleted) };
}

export function toSessionLink(row: RawRow): SessionLink {
  return {
    id: row.id as string,
    task_id: row.task_id as string,
    session_id: row.session_id as string,
    agent: (row.agent as string | null) ?? null,
    created_at: row.created_at as string,
  };
}

export function toFile(row: RawRow): FileAssociation {
  return {
    id: row.id as string,
    task_id: row.task_id as string,
    file_path: row.file_path as string,
    operation: row.operation as FileAssociation["operation"],
    session_id: row.session_id as string,
    created_at: row.created_at as string,
  };
}

export function toEvent(row: RawRow): ArbeitEvent {
  return {
    id: row.id as string,
    seq: Number(row.seq),
    timestamp: row.timestamp as string,
    event_type: row.event_type as ArbeitEvent["event_type"],
    entity_type: row.entity_type as ArbeitEvent["entity_type"],
    entity_id: row.entity_id as string,
    task_id: (row.task_id as string | null) ?? null,
    payload: JSON.parse(row.payload as string) as Record<string, unknown>,
    session_id: (row.session_id as string | null) ?? null,
    agent: (row.agent as string | null) ?? null,
  };
}

export function toMemory(row: RawRow): MemoryEntry {
  return {
    id: row.id as string,
    scope: row.scope as MemoryEntry["scope"],
    scope_id: row.scope_id as string,
    key: row.key as string,
    value: JSON.parse(row.value as string) as unknown,
    expires_at: (row.expires_at as string | null) ?? null,
    reinforced: Number(row.reinforced),
    created_at: row.created_at as string,
    updated_at: row.updated_at as string,
  };
}
