import { z } from "zod";
import { TEMPLATE_NAMES } from "../domain/templates.js";
import { TASK_STATUSES, TASK_TYPES } from "../domain/types.js";
import { expectedVersion, listId, name, taskId, text } from "../schemas/common.js";
import { LIMITS } from "../schemas/limits.js";
import { INCLUDE_SECTIONS } from "../service/briefing.js";
import { defineTool, IDEMPOTENT_WRITE, READ, WRITE } from "./define.js";

const longText = text(LIMITS.text);
const blockedBy = z.array(taskId).max(LIMITS.id_list);
const priority = z.number().int().min(0).max(4);

export const taskCreate = defineTool({
  name: "arbeit_task_create",
  title: "Create task",
  description:
    "Create a task (or subtask via parent_id). Typed tasks should carry intent (why), description (what) and plan (how); missing ones come back as recommendations.",
  input: () =>
    z.strictObject({
      title: text(LIMITS.title).min(1),
      type: z.enum(TASK_TYPES).nullable().optional(),
      template: z.enum(TEMPLATE_NAMES).optional().describe("Sets type and returns a plan stub"),
      intent: longText.optional().describe("Why; immutable once set"),
      description: longText.optional(),
      plan: longText.optional(),
      parent_id: taskId.optional(),
      blocked_by: blockedBy.optional(),
      status: z.enum(TASK_STATUSES).optional(),
      priority: priority.optional().describe("0 highest, 4 lowest; default 2"),
      owner: name.optional(),
      active_form: name.optional().describe("Present-tense label, e.g. 'Fixing login'"),
      list_id: listId.optional(),
    }),
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).createTask(args, ctx.caller),
});

export const taskGet = defineTool({
  name: "arbeit_task_get",
  title: "Get task / briefing",
  description:
    "Fetch a task; add include sections for a resume briefing (context, progress_summary, files, recent_events ...).",
  input: () =>
    z.strictObject({
      task_id: taskId,
      include: z.array(z.enum(INCLUDE_SECTIONS)).max(INCLUDE_SECTIONS.length).optional(),
    }),
  annotations: READ,
  run: async (ctx, args) => (await ctx.service()).getTask(args),
});

export const taskUpdate = defineTool({
  name: "arbeit_task_update",
  title: "Update task",
  description:
    "Change fields or status. in_progress/completed need the type's fields. parent_id null detaches; blocked_by replaces the list. expected_version guards against lost updates.",
  input: () =>
    z.strictObject({
      task_id: taskId,
      title: text(LIMITS.title).min(1).optional(),
      type: z.enum(TASK_TYPES).nullable().optional(),
      intent: longText.optional(),
      description: longText.optional(),
      plan: longText.optional(),
      status: z.enum(TASK_STATUSES).optional(),
      parent_id: taskId.nullable().optional(),
      blocked_by: blockedBy.optional(),
      priority: priority.optional(),
      owner: name.nullable().optional(),
      active_form: name.nullable().optional(),
      expected_version: expectedVersion.optional(),
    }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).updateTask(args, ctx.caller),
});

export const taskDelete = defineTool({
  name: "arbeit_task_delete",
  title: "Delete task",
  description: "Soft-delete a task with no live children; its history is kept.",
  input: () => z.strictObject({ task_id: taskId, expected_version: expectedVersion.optional() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  run: async (ctx, args) => (await ctx.service()).deleteTask(args, ctx.caller),
});
