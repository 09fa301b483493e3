import { withArticle } from "../domain/article.js";
import { ArbeitError } from "../domain/errors.js";
import { mayFinishLanded } from "../domain/identity.js";
import { TEMPLATES, type TemplateName } from "../domain/templates.js";
import {
  DEFAULT_LIST_ID,
  DEFAULT_PRIORITY,
  isTerminal,
  type Task,
  type TaskStatus,
  type TaskType,
  type Warning,
} from "../domain/types.js";
import { assertTitle, assertTransition, missingFields, type RequiredField } from "../domain/validation.js";
import type { CreateTaskInput, UpdateTaskInput } from "../schemas/inputs.js";
import { jsonBytes } from "../schemas/json-size.js";
import { LIMITS } from "../schemas/limits.js";
import type { NewTask, StoreTx, TaskPatch } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { assertNotFenced, overrideOthersClaim } from "./claims.js";
import {
  assertBlockerList,
  assertCanBlock,
  assertCanParent,
  assertVersion,
  requireTask,
  requireTaskToChange,
  underGraphLock,
} from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps, type WriteContext } from "./operation.js";
import { blockersWarning } from "./warnings.js";
import { finishWorkOn } from "./work.js";

export type { CreateTaskInput, UpdateTaskInput };

export interface Recommendations {
  plan_template?: string;
  missing_fields?: RequiredField[];
}

export interface TaskWithRecommendations {
  task: Task;
  recommendations?: Recommendations;
}

function recommend(task: Task, template: TemplateName | undefined): Recommendations | undefined {
  const missing = missingFields(task.type, task);
  const templateName = template ?? (missing.length > 0 ? (task.type as TemplateName | null) : undefined);
  if (missing.length === 0 && template === undefined) return undefined;
  const recommendations: Recommendations = {};
  if (templateName) recommendations.plan_template = TEMPLATES[templateName].plan_template;
  if (missing.length > 0) recommendations.missing_fields = missing;
  return recommendations;
}

function withRecommendations(task: Task, template?: TemplateName): TaskWithRecommendations {
  const recommendations = recommend(task, template);
  return recommendations ? { task, recommendations } : { task };
}

async function statusWarnings(tx: StoreTx, task: Task, previous: TaskStatus | null): Promise<Warning[]> {
  const warnings: Warning[] = [];
  if (task.status === previous) return warnings;
  if (task.status === "completed") {
    const open = (await tx.children(task.id)).filter((child) => !isTerminal(child.status));
    if (open.length > 0) {
      warnings.push({
        code: "HAS_INCOMPLETE_CHILDREN",
        message: `Completed ${task.id} while ${open.length} child task(s) are unfinished: ${open.map((c) => c.id).join(", ")}.`,
      });
    }
  }
  const blockers = task.status === "in_progress" ? await blockersWarning(tx, task) : undefined;
  if (blockers) warnings.push(blockers);
  return warnings;
}

function resolveType(input: { type?: TaskType | null; template?: TemplateName }): TaskType | null {
  if (input.template === undefined) return input.type ?? null;
  const templateType = TEMPLATES[input.template].type;
  if (input.type !== undefined && input.type !== null && input.type !== templateType) {
    throw new ArbeitError(
      "INVALID_TEMPLATE",
      `Template ${input.template} makes ${withArticle(templateType)} task, but type ${input.type} was given.`,
      { details: { template: input.template, type: input.type } },
    );
  }
  return templateType;
}

/** A new task with no edges, as a read of its row would give it, in the same field order. */
function newTask(id: string, row: NewTask): Task {
  return {
    id,
    list_id: row.list_id,
    title: row.title,
    type: row.type,
    status: row.status,
    intent: row.intent,
    description: row.description,
    plan: row.plan,
    parent_id: null,
    blocked_by: [],
    blocks: [],
    blocked: false,
    priority: row.priority,
    risk: row.risk,
    impact: row.impact,
    owner: row.owner,
    lease_expires_at: null,
    claim_session: null,
    active_form: row.active_form,
    metadata: row.metadata,
    version: 1,
    created_at: row.created_at,
    updated_at: row.created_at,
  };
}

export async function createTask(
  deps: ServiceDeps,
  input: CreateTaskInput,
  caller: Caller,
): Promise<Result<TaskWithRecommendations>> {
  assertTitle(input.title);
  const type = resolveType(input);
  const status = input.status ?? "open";
  assertTransition(type, status, input, "create");
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    const blockers = input.blocked_by ?? [];
    if (input.parent_id || blockers.length > 0)
      await underGraphLock(tx, async () => {
        if (input.parent_id) await assertCanParent(tx, input.parent_id, null);
        await assertBlockerList(tx, null, blockers);
      });
    const row = {
      list_id: input.list_id ?? caller.list_id ?? DEFAULT_LIST_ID,
      title: input.title,
      type,
      status,
      intent: input.intent ?? null,
      description: input.description ?? null,
      plan: input.plan ?? null,
      priority: input.priority ?? DEFAULT_PRIORITY,
      risk: input.risk ?? null,
      impact: input.impact ?? null,
      owner: input.owner ?? null,
      active_form: input.active_form ?? null,
      metadata: mergeMetadata(null, input.metadata),
      created_at: now,
    };
    const id = await tx.insertTask(row);
    if (input.parent_id) {
      await tx.insertRelationship({
        from_task_id: input.parent_id,
        to_task_id: id,
        type: "parent_of",
        metadata: null,
        created_at: now,
      });
    }
    for (const blocker of blockers) {
      await tx.insertRelationship({
        from_task_id: blocker,
        to_task_id: id,
        type: "blocks",
        metadata: null,
        created_at: now,
      });
    }
    // A task is exactly what was written, its parent (checked live under the graph lock, which
    // a deletion also takes) included: only whether its blockers leave it blocked needs reading.
    const written = { ...newTask(id, row), parent_id: input.parent_id ?? null };
    const task = blockers.length > 0 ? await requireTask(tx, id) : written;
    await w.emit({ event_type: "task_created", entity_type: "task", entity_id: id, task_id: id, payload: { task } });
    return ok(withRecommendations(task, input.template), await statusWarnings(tx, task, null));
  });
}

type Change = { from: unknown; to: unknown };

export async function updateTask(
  deps: ServiceDeps,
  input: UpdateTaskInput,
  caller: Caller,
): Promise<Result<TaskWithRecommendations>> {
  if (input.title !== undefined) assertTitle(input.title);
  if (input.landed_ref !== undefined && input.status !== "completed")
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      'landed_ref names where finished work landed: it goes with status "completed".',
      {
        details: { field: "landed_ref" },
        suggestions: ['Give status: "completed" with landed_ref, or leave landed_ref out.'],
      },
    );
  return mutate(deps, caller, async (w) => {
    if (input.parent_id !== undefined || input.blocked_by !== undefined) await w.tx.lockGraph();
    let current = await requireTaskToChange(w.tx, input.task_id);
    w.read(current);
    assertVersion(current, input.expected_version);
    if (!input.force) await assertNotFenced(w, current);
    assertIntentKept(current, input.intent);
    let { patch, changes } = fieldChanges(current, input);
    assertStatusHolds(current, patch);
    // `owner` is the claim's agent while a lease lives, and a status change moves or ends the
    // holder's work: only the holder may make either, unless forced.
    const claimChange = "owner" in patch || "status" in patch;
    if (claimChange) {
      const before = current;
      current = await overrideOthersClaim(w, current, input.force || finishesLanded(input, patch, w.caller));
      if (current !== before) ({ patch, changes } = fieldChanges(current, input));
    }
    const parentMoved = await moveParent(w, current, input.parent_id);
    if (parentMoved) changes.parent_id = parentMoved;
    const blockersChanged = await replaceBlockers(w, current, input.blocked_by);
    if (blockersChanged) changes.blocked_by = blockersChanged;
    // The title, the parent and the blockers are the work the holder took on and where it sits:
    // only the holder reshapes them, unless forced. Checked once the new shape proved valid, so a
    // call that would fail anyway fails for its own reason; a refusal undoes the graph changes.
    if (!claimChange && ("title" in patch || parentMoved || blockersChanged))
      current = await overrideOthersClaim(w, current, input.force);
    // Nothing differs: no write, no version bump, no event.
    if (Object.keys(changes).length === 0) return ok(withRecommendations(current));
    let task = await save(w, current, patch, changes, input.landed_ref);
    if ("owner" in patch) task = await endLeaseOnOwnerChange(w, task);
    if (isTerminal(task.status) && !isTerminal(current.status)) {
      await finishWorkOn(w, task);
      task = await requireTask(w.tx, task.id);
    }
    return ok(withRecommendations(task), await statusWarnings(w.tx, task, current.status));
  });
}

/**
 * A new owner is an assignment, not a claim: when the holder hands the task on (or sets no
 * owner), its lease ends with the change; the task_updated event records it.
 */
async function endLeaseOnOwnerChange(w: WriteContext, task: Task): Promise<Task> {
  if (task.claim_session === null && task.lease_expires_at === null) return task;
  await w.tx.dropLease(task.id);
  return { ...task, claim_session: null, lease_expires_at: null };
}

/** A blank intent counts as unset, as it does for INTENT_REQUIRED: it can still be filled in. */
function assertIntentKept(current: Task, intent: string | undefined): void {
  if (intent === undefined || current.intent === null || current.intent.trim() === "") return;
  if (intent === current.intent) return;
  throw new ArbeitError("INTENT_IMMUTABLE", `The intent of ${current.id} is fixed once set and cannot be changed.`, {
    details: { task_id: current.id, intent: current.intent },
  });
}

const SCALAR_FIELDS = [
  "title",
  "type",
  "intent",
  "description",
  "plan",
  "status",
  "priority",
  "risk",
  "impact",
  "owner",
  "active_form",
] as const;

/** The fields the call really changes, and each change as {from, to} for the event. */
function fieldChanges(current: Task, input: UpdateTaskInput): { patch: TaskPatch; changes: Record<string, Change> } {
  const patch: TaskPatch = {};
  const changes: Record<string, Change> = {};
  for (const field of SCALAR_FIELDS) {
    const value = input[field];
    if (value === undefined || value === current[field]) continue;
    (patch as Record<string, unknown>)[field] = value;
    changes[field] = { from: current[field], to: value };
  }
  if (input.metadata !== undefined) {
    const metadata = mergeMetadata(current.metadata, input.metadata);
    if (JSON.stringify(metadata) !== JSON.stringify(current.metadata)) {
      patch.metadata = metadata;
      changes.metadata = { from: current.metadata, to: metadata };
    }
  }
  return { patch, changes };
}

/**
 * A task's metadata after a call: the given keys are set over the current ones, a key given as
 * null is removed, and an object left with no keys is no metadata (null). The result is held to
 * the size limit of metadata as a whole.
 */
export function mergeMetadata(
  current: Record<string, unknown> | null,
  given: Record<string, unknown> | undefined,
): Record<string, unknown> | null {
  if (given === undefined) return current;
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(given)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  if (Object.keys(merged).length === 0) return null;
  if (jsonBytes(merged) > LIMITS.metadata_bytes) {
    throw new ArbeitError(
      "FIELD_TOO_LARGE",
      `metadata would be too large once merged (limit ${LIMITS.metadata_bytes} bytes of JSON); remove keys with null.`,
      { details: { field: "metadata", limit: LIMITS.metadata_bytes } },
    );
  }
  return merged;
}

/**
 * The task as it will be must satisfy its status: fields set in this same call count, and
 * changing the type or blanking a field of an in-progress or completed task is checked too.
 */
function assertStatusHolds(current: Task, patch: TaskPatch): void {
  const touchesRequirements = (["status", "type", "intent", "description", "plan"] as const).some((f) => f in patch);
  if (!touchesRequirements) return;
  const next = { ...current, ...patch } as Task;
  assertTransition(next.type, next.status, next);
}

/** Moves the task under `parentId` (null: to the top); returns the change, if any. */
async function moveParent(
  w: WriteContext,
  current: Task,
  parentId: string | null | undefined,
): Promise<Change | undefined> {
  if (parentId === undefined || parentId === current.parent_id) return undefined;
  const { tx, now } = w;
  if (parentId !== null) await assertCanParent(tx, parentId, current.id);
  const existing = current.parent_id
    ? await tx.findRelationship(current.parent_id, current.id, "parent_of")
    : undefined;
  if (existing) await tx.removeRelationship(existing.id, now);
  if (parentId !== null) {
    await tx.insertRelationship({
      from_task_id: parentId,
      to_task_id: current.id,
      type: "parent_of",
      metadata: null,
      created_at: now,
    });
  }
  return { from: current.parent_id, to: parentId };
}

/** Makes the task's blockers exactly `blockedBy`; returns the change, if any. */
async function replaceBlockers(
  w: WriteContext,
  current: Task,
  blockedBy: string[] | undefined,
): Promise<Change | undefined> {
  if (blockedBy === undefined) return undefined;
  const { tx, now } = w;
  await assertBlockerList(tx, current.id, blockedBy);
  const wanted = new Set(blockedBy);
  const had = new Set(current.blocked_by);
  const added = blockedBy.filter((id) => !had.has(id));
  const removed = current.blocked_by.filter((id) => !wanted.has(id));
  for (const id of removed) {
    const edge = await tx.findRelationship(id, current.id, "blocks");
    if (edge) await tx.removeRelationship(edge.id, now);
  }
  for (const id of added) {
    await assertCanBlock(tx, id, current.id);
    await tx.insertRelationship({
      from_task_id: id,
      to_task_id: current.id,
      type: "blocks",
      metadata: null,
      created_at: now,
    });
  }
  return added.length > 0 || removed.length > 0 ? { from: current.blocked_by, to: blockedBy } : undefined;
}

/** Writes the patch (or, for a graph-only change, a new version) and the task_updated event. */
async function save(
  w: WriteContext,
  current: Task,
  patch: TaskPatch,
  changes: Record<string, Change>,
  landedRef?: string,
): Promise<Task> {
  if (Object.keys(patch).length > 0) await w.tx.updateTask(current.id, patch, w.now);
  else await w.tx.touchTask(current.id, w.now);
  // Fields alone change nothing read through the graph (parent, blockers, blocked): the task is
  // the locked row with the patch applied, so it is not read back.
  const graphChanged = "parent_id" in changes || "blocked_by" in changes;
  const task = graphChanged
    ? await requireTask(w.tx, current.id)
    : { ...current, ...patch, version: current.version + 1, updated_at: w.now };
  await w.emit({
    event_type: "task_updated",
    entity_type: "task",
    entity_id: task.id,
    task_id: task.id,
    payload: { changes, version: task.version, ...(landedRef === undefined ? {} : { landed_ref: landedRef }) },
  });
  return task;
}

/**
 * Whether this update finishes the task because its work landed, in a way that may end another
 * session's claim: it completes the task naming where the work landed (landed_ref), changes
 * nothing else, and comes from CI or a person (mayFinishLanded). The claim is broken as `force` breaks
 * it (logged as a forced release naming the holder), and task_updated records the ref.
 */
function finishesLanded(input: UpdateTaskInput, patch: TaskPatch, caller: Caller): boolean {
  const statusOnly = Object.keys(patch).every((field) => field === "status");
  const graphKept = input.parent_id === undefined && input.blocked_by === undefined;
  return (
    input.landed_ref !== undefined &&
    patch.status === "completed" &&
    statusOnly &&
    graphKept &&
    mayFinishLanded(caller.agent)
  );
}

export interface DeleteTaskInput {
  task_id: string;
  expected_version?: number | undefined;
  force?: boolean | undefined;
}

export async function deleteTask(
  deps: ServiceDeps,
  input: DeleteTaskInput,
  caller: Caller,
): Promise<Result<{ deleted: boolean }>> {
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    await tx.lockGraph();
    const task = await requireTaskToChange(tx, input.task_id);
    assertVersion(task, input.expected_version);
    const children = await tx.children(task.id);
    if (children.length > 0) {
      throw new ArbeitError(
        "HAS_CHILDREN",
        `${task.id} still has ${children.length} child task(s): ${children.map((c) => c.id).join(", ")}.`,
        {
          details: { children: children.map((c) => c.id) },
        },
      );
    }
    // A deleted task's claim ends with it: only its holder may delete it, unless forced.
    await overrideOthersClaim(w, task, input.force);
    await tx.softDeleteTask(task.id, now);
    await w.emit({
      event_type: "task_deleted",
      entity_type: "task",
      entity_id: task.id,
      task_id: task.id,
      payload: { title: task.title, status: task.status },
    });
    return ok({ deleted: true });
  });
}
