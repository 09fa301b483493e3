/**
 * Every error code a tool can return, each with the advice an
 * agent gets by default. Messages are written for a model to read and act on.
 */
export const ERROR_SUGGESTIONS = {
  NOT_INITIALIZED: [
    "No Arbeit store was found from this folder up. If the project has one, check the folder you run in (and ARBEIT_DB or ARBEIT_DATABASE_URL); if it has never used Arbeit, create its store with arbeit_init (CLI: `arbeit init`) in the project root.",
  ],
  ALREADY_INITIALIZED: ["Arbeit is ready to use here, with the tasks already in its store; nothing to set up."],
  TASK_NOT_FOUND: ['Check the task id; list tasks with arbeit_query {query: "tasks"}.'],
  ENTRY_NOT_FOUND: ['Check the entry id; arbeit_task_get {task_id, include: ["context_all", "progress"]} lists them.'],
  MEMORY_NOT_FOUND: [
    'Check the keys and their scope; arbeit_memory {action: "list"} lists a scope\'s keys (details.keys names the missing ones).',
  ],
  PARENT_NOT_FOUND: ["Check parent_id, or create the parent task first."],
  BLOCKER_NOT_FOUND: ["Check the ids in blocked_by; every blocker must be an existing task."],
  MAX_DEPTH_EXCEEDED: ["Hierarchies are at most 4 levels deep; attach the task higher up or flatten the tree."],
  CIRCULAR_DEPENDENCY: [
    "Review the graph with arbeit_query ancestors_of / blocked_tasks; drop the edge that closes the loop.",
  ],
  RELATIONSHIP_EXISTS: ["No action needed, or remove the existing relationship first."],
  HAS_CHILDREN: [
    'Cancel the task instead (arbeit_task_update {task_id, status: "cancelled"} keeps its children), or re-parent the children first; arbeit_query {query: "children_of", params: {task_id}} lists them.',
  ],
  ALREADY_WORKING: ["Call arbeit_task_stop_work {task_id} on the current task first."],
  ALREADY_SUPERSEDED: ["Supersede the newest entry in the chain instead (its id is in superseded_by)."],
  INVALID_STATUS: ["Use one of: open, in_progress, completed, cancelled."],
  INVALID_TYPE: ["Use one of the documented types for this field."],
  INVALID_TEMPLATE: ['Use a template from arbeit_query {query: "templates"}; omit type or make it match the template.'],
  TITLE_REQUIRED: ["Give a short, non-empty title."],
  INTENT_REQUIRED: ["Set intent (why the task exists) with arbeit_task_update {task_id, intent}."],
  DESCRIPTION_REQUIRED: ["Set description (what the task does) with arbeit_task_update {task_id, description}."],
  PLAN_REQUIRED: [
    'Set plan (how to do it) with arbeit_task_update {task_id, plan}; arbeit_query {query: "templates"} has plan stubs.',
  ],
  INVALID_BLOCKER: ["A task cannot block itself; remove its own id from blocked_by."],
  DUPLICATE_BLOCKERS: ["List each blocker once in blocked_by."],
  INVALID_ARGUMENT: ["Check the arguments against the tool's schema."],
  INTENT_IMMUTABLE: [
    'Intent is fixed once set; record a new direction as a decision: arbeit_context_add {task_id, type: "decision", content}.',
  ],
  VERSION_CONFLICT: [
    "Re-read the task with arbeit_task_get {task_id}, re-apply your change, and retry with the new version.",
  ],
  ALREADY_CLAIMED: [
    "Pick another task (arbeit_query {query: \"ready\"}) or wait for the lease to expire; releasing another session's claim is a person's decision.",
  ],
  CLAIM_MOVED: [
    'Another session holds this task now: stop work on it (arbeit_task_stop_work {task_id}) and pick another (arbeit_query {query: "ready"}).',
  ],
  FILE_RESERVED: [
    "Work on other files or another task, or wait until the reservation ends; breaking another session's reservation is a person's decision.",
  ],
  RESERVATION_TOO_BROAD: [
    "Reserve the folders or files your task changes (e.g. src/auth/**), or reserve everything shared (shared: true).",
  ],
  FIELD_TOO_LARGE: ["Shorten the value; put long material in a file and reference it."],
  INVALID_ID: [
    "Ids are a prefix for their kind and 8 lowercase letters or digits: tkt-a7f3b2c1 for a task, ctx- for a context entry, prg- for a progress item.",
  ],
  INVALID_METADATA: ['metadata must be a JSON object, e.g. {"source": "docs"}.'],
  UNKNOWN_QUERY: ["Use one of the query names the message lists."],
  SCHEMA_TOO_NEW: ["This database was written by a newer Arbeit; upgrade the arbeit package."],
  SCHEMA_TOO_OLD: [
    "The shared store has not been migrated to this Arbeit's schema yet. Its administrator migrates it once, with this release: `arbeit migrate`, or by restarting `arbeit serve` (docs/postgres.md#upgrading-a-shared-store); the release the team used before keeps working meanwhile.",
  ],
  INVALID_IMPORT: [
    "Nothing was imported. Fix the line the message names, or write the file again with `arbeit export`.",
  ],
  INPUT_TOO_LARGE: ["Send less at once; put long material in a file and pass its path."],
  STORE_READ_ONLY: [
    "The database or its folder cannot be written (read-only file system or permissions); reads still work. Make it writable, or set ARBEIT_DB to a writable copy.",
  ],
  STORE_DAMAGED: [
    "The database file is damaged; nothing was written. Leave the file as it is and tell a person: `arbeit doctor` describes the damage, and restoring the store from a backup is their decision (docs/maintenance.md).",
  ],
  STORE_UNAVAILABLE: [
    "The database could not be reached or written (disk full, permissions, server down). Fix that and retry; nothing was written.",
  ],
  SETUP_REFUSED: [
    "Setup wrote no file. Make the file the message names a readable, writable regular file (or fix its JSON), then run setup again.",
  ],
  WEBHOOK_TARGET_REFUSED: [
    "No webhook was added. Give a public https URL without user:pass; a person who means a target on this machine or its private network adds it with `arbeit notify add <url> --allow-private`.",
  ],
  UNAUTHORIZED: [
    "Send a valid token as `Authorization: Bearer arb_...`; the service's administrator makes them with `arbeit token create` (docs/team.md).",
  ],
  FORBIDDEN: [
    "This token may not do that. Ask a person to do it, or ask the service's administrator for a token that may (docs/team.md).",
  ],
  RATE_LIMITED: [
    "Too many requests or open streams for this token; nothing was done. Wait the seconds Retry-After names, then retry; close MCP sessions you no longer use (docs/team.md#limits).",
  ],
  VERSION_UNSUPPORTED: [
    "This Arbeit client and the service are releases that do not work together; nothing was done. Upgrade the one the message names (docs/team.md#versions).",
  ],
  INTERNAL_ERROR: ["This is a bug in Arbeit; nothing was written. Retry once, then report it."],
} as const satisfies Record<string, readonly string[]>;

export type ErrorCode = keyof typeof ERROR_SUGGESTIONS;
export const ERROR_CODES = Object.keys(ERROR_SUGGESTIONS) as ErrorCode[];

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  suggestions?: string[];
  details?: Record<string, unknown>;
}

/** The one error type the service throws; front ends turn it into their own form in one place. */
export class ArbeitError extends Error {
  readonly code: ErrorCode;
  readonly suggestions: string[];
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { suggestions?: string[]; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = "ArbeitError";
    this.code = code;
    this.suggestions = options.suggestions ?? [...ERROR_SUGGESTIONS[code]];
    this.details = options.details;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.suggestions.length > 0) body.suggestions = this.suggestions;
    if (this.details) body.details = this.details;
    return body;
  }
}

export function taskNotFound(id: string): ArbeitError {
  return new ArbeitError("TASK_NOT_FOUND", `Task ${id} does not exist (or was deleted).`);
}
