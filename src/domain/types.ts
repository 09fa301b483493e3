/** The settled data model. Field names are the wire names agents see. */

export const TASK_STATUSES = ["open", "in_progress", "completed", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TASK_TYPES = ["epic", "feature", "bug", "investigation", "chore"] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const CONTEXT_TYPES = [
  "decision",
  "rationale",
  "attempt",
  "outcome",
  "blocker",
  "note",
  "reference",
  "user_input",
] as const;
export type ContextType = (typeof CONTEXT_TYPES)[number];

export const RELATIONSHIP_TYPES = ["parent_of", "blocks", "relates_to", "duplicates", "splits_from"] as const;
export type RelationshipType = (typeof RELATIONSHIP_TYPES)[number];

export const INVERSE_RELATIONSHIP_TYPES = ["child_of", "blocked_by", "duplicated_by", "split_into"] as const;
export type InverseRelationshipType = (typeof INVERSE_RELATIONSHIP_TYPES)[number];

/** How likely a task is to go wrong (risk), or how much it matters if it does (impact). */
export const RISK_LEVELS = ["low", "medium", "high"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export const FILE_OPERATIONS = ["read", "write"] as const;
export type FileOperation = (typeof FILE_OPERATIONS)[number];

export const MAX_HIERARCHY_DEPTH = 4;
export const DEFAULT_PRIORITY = 2;
export const DEFAULT_LIST_ID = "default";

/** A task as every read returns it. `blocked` is derived, never stored. */
export interface Task {
  id: string;
  list_id: string;
  title: string;
  type: TaskType | null;
  status: TaskStatus;
  intent: string | null;
  description: string | null;
  plan: string | null;
  parent_id: string | null;
  blocked_by: string[];
  /** The live tasks this one blocks, by id. */
  blocks: string[];
  blocked: boolean;
  priority: number;
  /** Not assessed while null. */
  risk: RiskLevel | null;
  impact: RiskLevel | null;
  owner: string | null;
  /** Until when `owner` holds the task under a claim; null when unclaimed. */
  lease_expires_at: string | null;
  /** The session holding the claim (null when unclaimed): only it may change the claim. */
  claim_session: string | null;
  active_form: string | null;
  /** A JSON object agents and integrations attach (external ids, labels, estimates); null when none. */
  metadata: Record<string, unknown> | null;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The fields of a task that a person's overview (a card on the board) shows as they are. */
export type CardField =
  | "id"
  | "list_id"
  | "title"
  | "type"
  | "status"
  | "priority"
  | "owner"
  | "parent_id"
  | "risk"
  | "impact"
  | "version"
  | "created_at"
  | "updated_at"
  | "blocked";

/**
 * A task as listings return it: what an agent chooses and acts by, and nothing that is null,
 * empty, false or at its default (priority 2, the default list), so that a long list stays cheap
 * to read. Version and timestamps come only when a query's `fields` asks for them; the heavy text
 * fields only with `full: true` or from arbeit_task_get.
 */
export interface TaskSummary {
  id: string;
  title: string;
  /** Left out in ready's answer alone, where every task is open. */
  status?: TaskStatus;
  type?: TaskType;
  /** Present when not the default, 2. */
  priority?: number;
  /** Present when assessed. */
  risk?: RiskLevel;
  impact?: RiskLevel;
  parent_id?: string;
  /** Present only when true: an unfinished blocker holds the task. */
  blocked?: true;
  /** The task's blockers (finished ones too), present while it is blocked. */
  blocked_by?: string[];
  owner?: string;
  lease_expires_at?: string;
  claim_session?: string;
  active_form?: string;
  /** Present when not the default list. */
  list_id?: string;
}

export interface ContextEntry {
  id: string;
  task_id: string;
  type: ContextType;
  content: string;
  metadata: Record<string, unknown> | null;
  superseded_by: string | null;
  created_at: string;
}

export interface ProgressItem {
  id: string;
  task_id: string;
  content: string;
  completed: boolean;
  created_at: string;
  completed_at: string | null;
}

export interface Relationship {
  id: string;
  from_task_id: string;
  to_task_id: string;
  type: RelationshipType;
  metadata: Record<string, unknown> | null;
  created_at: string;
}

export interface SessionLink {
  id: string;
  task_id: string;
  session_id: string;
  agent: string | null;
  created_at: string;
}

export interface FileAssociation {
  id: string;
  task_id: string;
  file_path: string;
  operation: FileOperation;
  session_id: string;
  created_at: string;
}

export interface ArbeitEvent {
  id: string;
  seq: number;
  timestamp: string;
  event_type: EventType;
  entity_type: EntityType;
  entity_id: string;
  task_id: string | null;
  payload: Record<string, unknown>;
  session_id: string | null;
  agent: string | null;
}

/** What a host saw a session do (Claude Code hooks): no row of their own, the event is the record. */
export const HOST_EVENT_TYPES = [
  "prompt_submitted",
  "commit_recorded",
  "subagent_started",
  "subagent_stopped",
  "session_compacted",
  /** A retrospective of the session was offered to its agent (src/service/retrospective.ts). */
  "retrospective_offered",
  /** A checkout could not reach the service from `since` to `until` (src/remote/cut-off-step.ts). */
  "client_cut_off",
] as const;

export const EVENT_TYPES = [
  "task_created",
  "task_updated",
  "task_deleted",
  "context_added",
  "context_superseded",
  "progress_added",
  "progress_completed",
  "relationship_added",
  "relationship_removed",
  "work_started",
  "work_stopped",
  "file_tracked",
  "task_claimed",
  "claim_renewed",
  "claim_released",
  "claim_expired",
  "files_reserved",
  "reservation_released",
  "reservation_expired",
  /** A host refused a session's edit of a file another session reserved exclusively (once per session, reservation and path). */
  "edit_refused",
  "memory_set",
  "memory_deleted",
  "token_created",
  "token_revoked",
  ...HOST_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const ENTITY_TYPES = [
  "memory",
  "task",
  "context_entry",
  "progress_item",
  "relationship",
  "session_link",
  "file_association",
  /** A host session (its id is the session id): for what a session did outside any task. */
  "session",
  /** A token of `arbeit serve` (docs/team.md): made and revoked by the administrator. */
  "token",
  /** A file reservation (domain/reservations.ts): its row is gone once released, its events stay. */
  "reservation",
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export interface Warning {
  code: WarningCode;
  message: string;
}

export const WARNING_CODES = [
  "HAS_INCOMPLETE_CHILDREN",
  "HAS_BLOCKERS",
  "STALE_CONTEXT",
  "ORPHAN_RELATIONSHIPS",
  "MEMORY_EVICTED",
  "SECRET_REDACTED",
] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

/** What each warning means: the call succeeded, and this is worth a look. */
export const WARNING_MEANINGS: Record<WarningCode, string> = {
  HAS_INCOMPLETE_CHILDREN: "A task was completed while some of its children are unfinished; they are left as they are.",
  HAS_BLOCKERS: "A task that unfinished tasks still block was claimed, started or set in_progress.",
  STALE_CONTEXT:
    "The newest live context on the task is a week old or more: check it still holds, and supersede what does not.",
  ORPHAN_RELATIONSHIPS: "The task has relationships to deleted tasks; remove them with `arbeit_relationship`.",
  MEMORY_EVICTED:
    "A new key in a full memory scope evicted the least reinforced, least recently set entry; its value is in `evicted`.",
  SECRET_REDACTED:
    "Text in the call held one of Arbeit's secrets (an `arb_` token, a `whsec_` webhook secret or an `arbui_` dashboard token); it was stored as `arb_[redacted]` (and so on). Treat the secret as leaked: revoke the token, replace the webhook or restart `arbeit ui`.",
};

export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "cancelled";
}

export const MEMORY_SCOPES = ["project", "list", "task", "agent"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export interface MemoryEntry {
  id: string;
  scope: MemoryScope;
  scope_id: string;
  key: string;
  value: unknown;
  expires_at: string | null;
  /** How many times the entry was set while live: 1 when first set. */
  reinforced: number;
  created_at: string;
  /** When it was last set: its last reinforcement. */
  updated_at: string;
}
