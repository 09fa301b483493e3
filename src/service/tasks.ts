import { ArbeitError } from "../domain/errors.js";
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
import type { StoreTx, TaskPatch } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { emit, ok, type Result, type ServiceDeps } from "./deps.js";
import { assertBlockerList, assertCanBlock, assertCanParent, assertVersion, requireTask } from "./graph-rules.js";

export interface Recommendations {
  plan_template?: string;
  missing_fields?: RequiredField[];
}

export interface CreateTaskInput {
  title: string;
  type?: TaskType | null;
  template?: TemplateName;
  intent?: string;
  description?: string;
  plan?: string;
  parent_id?: string | null;
  blocked_by?: string[];
  status?: TaskStatus;
  priority?: number;
  owner?: string | null;
  active_form?: string | null;
  list_id?: string;
}

export interface UpdateTaskInput {
  task_id: string;
  title?: string;
  type?: TaskType | null;
  intent?: string;
  description?: string;
  plan?: string;
  status?: TaskStatus;
  parent_id?: string | null;
  blocked_by?: string[];
  priority?: number;
  owner?: string | null;
  active_form?: string | null;
  expected_version?: number;
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
  if (task.status === "in_progress" && task.blocked) warnings.push(blockersWarning(task));
  return warnings;
}

export function blockersWarning(task: Task): Warning {
  return {
    code: "HAS_BLOCKERS",
    message: `${task.id} is still blocked by unfinished work (${task.blocked_by.join(", ")}); check it before going on.`,
  };
}

function resolveType(input: { type?: TaskType | null; template?: TemplateName }): TaskType | null {
  if (input.template === undefined) return input.type ?? null;
  const templateType = TEMPLATES[input.template].type;
  if (input.type !== undefined && input.type !== null && input.type !== templateType) {
    throw new ArbeitError(
      "INVALID_TEMPLATE",
      `Template ${input.template} makes a ${templateType} task, but type ${input.type} was given.`,
      { details: { template: input.template, type: input.type } },
    );
  }
  return templateType;
}

export async function createTask(
  deps: ServiceDeps,
  input: CreateTaskInput,
  caller: Caller,
): Promise<Result<TaskWithRecommendations>> {
  assertTitle(input.title);
  const type = resolveType(input);
  const status = input.status ?? "open";
  assertTransition(type, status, input);
  return deps.store.write(async (tx) => {
    if (input.parent_id) await assertCanParent(tx, input.parent_id, null);
    const blockers = input.blocked_by ?? [];
    await assertBlockerList(tx, null, blockers);
    const now = deps.now();
    const id = await tx.insertTask({
      list_id: input.list_id ?? caller.list_id ?? DEFAULT_LIST_ID,
      title: input.title,
      type,
      status,
      intent: input.intent ?? null,
      description: input.description ?? null,
      plan: input.plan ?? null,
      priority: input.priority ?? DEFAULT_PRIORITY,
      owner: input.owner ?? null,
      active_form: input.active_form ?? null,
      created_at: now,
    });
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
    const task = await requireTask(tx, id);
    await emit(
      tx,
      deps,
      caller,
      { event_type: "task_created", entity_type: "task", entity_id: id, task_id: id, payload: { task } },
      now,
    );
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
  return deps.store.write(async (tx) => {
    const current = await requireTask(tx, input.task_id);
    assertVersion(current, input.expected_version);
    // A blank intent counts as unset, as it does for INTENT_REQUIRED: it can still be filled in.
    if (
      input.intent !== undefined &&
      current.intent !== null &&
      current.intent.trim() !== "" &&
      input.intent !== current.intent
    ) {
      throw new ArbeitError(
        "INTENT_IMMUTABLE",
        `The intent of ${current.id} is fixed once set and cannot be changed.`,
        {
          details: { task_id: current.id, intent: current.intent },
        },
      );
    }

    const patch: TaskPatch = {};
    const changes: Record<string, Change> = {};
    const scalarFields = [
      "title",
      "type",
      "intent",
      "description",
      "plan",
      "status",
      "priority",
      "owner",
      "active_form",
    ] as const;
    for (const field of scalarFields) {
      const value = input[field];
      if (value === undefined || value === current[field]) continue;
      (patch as Record<string, unknown>)[field] = value;
      changes[field] = { from: current[field], to: value };
    }
    const next = { ...current, ...patch } as Task;
    // The task as it will be must satisfy its status: fields set in this same call count, and
    // changing the type or blanking a field of an in-progress or completed task is checked too.
    const touchesRequirements = (["status", "type", "intent", "description", "plan"] as const).some((f) => f in patch);
    if (touchesRequirements) assertTransition(next.type, next.status, next);

    const now = deps.now();
    let graphChanged = false;
    if (input.parent_id !== undefined && input.parent_id !== current.parent_id) {
      if (input.parent_id !== null) await assertCanParent(tx, input.parent_id, current.id);
      const existing = current.parent_id
        ? await tx.findRelationship(current.parent_id, current.id, "parent_of")
        : undefined;
      if (existing) await tx.removeRelationship(existing.id, now);
      if (input.parent_id !== null) {
        await tx.insertRelationship({
          from_task_id: input.parent_id,
          to_task_id: current.id,
          type: "parent_of",
          metadata: null,
          created_at: now,
        });
      }
      changes.parent_id = { from: current.parent_id, to: input.parent_id };
      graphChanged = true;
    }
    if (input.blocked_by !== undefined) {
      await assertBlockerList(tx, current.id, input.blocked_by);
      const wanted = new Set(input.blocked_by);
      const had = new Set(current.blocked_by);
      const added = input.blocked_by.filter((id) => !had.has(id));
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
      if (added.length > 0 || removed.length > 0) {
        changes.blocked_by = { from: current.blocked_by, to: input.blocked_by };
        graphChanged = true;
      }
    }

    if (Object.keys(changes).length === 0) {
      // Nothing differs: no write, no version bump, no event.
      return ok(withRecommendations(current));
    }
    if (Object.keys(patch).length > 0) await tx.updateTask(current.id, patch, now);
    else if (graphChanged) await tx.touchTask(current.id, now);
    const task = await requireTask(tx, current.id);
    await emit(
      tx,
      deps,
      caller,
      {
        event_type: "task_updated",
        entity_type: "task",
        entity_id: task.id,
        task_id: task.id,
        payload: { changes, version: task.version },
      },
      now,
    );
    return ok(withRecommendations(task), await statusWarnings(tx, task, current.status));
  });
}

export async function deleteTask(
  deps: ServiceDeps,
  input: { task_id: string; expected_version?: number },
  caller: Caller,
): Promise<Result<{ deleted: boolean }>> {
  return deps.store.write(async (tx) => {
    const task = await requireTask(tx, input.task_id);
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
    const now = deps.now();
    await tx.softDeleteTask(task.id, now);
    await emit(
      tx,
      deps,
      caller,
      {
        event_type: "task_deleted",
        entity_type: "task",
        entity_id: task.id,
        task_id: task.id,
        payload: { title: task.title, status: task.status },
      },
      now,
    );
    return ok({ deleted: true });
  });
}
