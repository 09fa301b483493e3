import { z } from "zod";
import { expectedVersion, taskId, text } from "../schemas/common.js";
import { taskCreateInput, taskUpdateInput } from "../schemas/inputs.js";
import { LIMITS } from "../schemas/limits.js";
import { INCLUDE_SECTIONS } from "../service/briefing.js";
import { defineTool, destructive, IDEMPOTENT_WRITE, READ, WRITE } from "./define.js";

const _longText = text(LIMITS.text);
const _blockedBy = z.array(taskId).max(LIMITS.id_list);
const _priority = z.number().int().min(0).max(4);

export const taskCreate = defineTool({
  name: "arbeit_task_create",
  title: "Create task",
  description:
    "Create a task (subtask: parent_id). Typed tasks want intent (why), description (what), plan (how); missing ones come back as recommendations.",
  input: taskCreateInput,
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).createTask(args, ctx.caller),
});

export const taskGet = defineTool({
  name: "arbeit_task_get",
  title: "Get task / briefing",
  description: "Fetch a task in full; include adds the sections of a briefing.",
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
    "Change fields or status (in_progress/completed need the type's fields). parent_id null detaches; blocked_by replaces the list; metadata merges (null drops a key); expected_version prevents lost updates.",
  input: taskUpdateInput,
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).updateTask(args, ctx.caller),
});

export const taskDelete = defineTool({
  name: "arbeit_task_delete",
  title: "Delete task",
  description: "Soft-delete a task with no live children; its history is kept.",
  input: () =>
    z.strictObject({
      task_id: taskId,
      expected_version: expectedVersion.optional(),
      force: z.boolean().optional().describe("Break another session's claim (logged)"),
    }),
  annotations: destructive(WRITE),
  run: async (ctx, args) => (await ctx.service()).deleteTask(args, ctx.caller),
});
