import { z } from "zod";
import { expectedVersion, id, name, taskId, text } from "../schemas/common.js";
import { contextAddInput, relationshipInput } from "../schemas/inputs.js";
import { LIMITS } from "../schemas/limits.js";
import { ok } from "../service/operation.js";
import { initProject } from "../service/project.js";
import { QUERY_NAMES, queryGuide } from "../service/queries.js";
import { defineTool, IDEMPOTENT_WRITE, READ, WRITE } from "./define.js";

/** Hosts pass their own session; this lets a caller name another (e.g. resuming a conversation). */
const sessionArg = name.min(1).optional().describe("Defaults to yours");

export const init = defineTool({
  name: "arbeit_init",
  title: "Initialise Arbeit",
  description: "Create .arbeit/ and its database in the project root; once per project, before other arbeit tools.",
  input: () =>
    z.strictObject({
      nested: z.boolean().optional().describe("Own store inside another project"),
    }),
  annotations: WRITE,
  run: async (ctx, args) => ok(await initProject({ cwd: ctx.cwd, db: ctx.db, nested: args.nested })),
});

export const startWork = defineTool({
  name: "arbeit_task_start_work",
  title: "Start work",
  description:
    "Begin working on a task in this session: marks it in_progress, links the session, tracks files you touch.",
  input: () => z.strictObject({ task_id: taskId, session: sessionArg, expected_version: expectedVersion.optional() }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).startWork(args, ctx.caller),
});

export const stopWork = defineTool({
  name: "arbeit_task_stop_work",
  title: "Stop work",
  description: "Pause or finish working on a task in this session; stops file tracking. Status is unchanged.",
  input: () => z.strictObject({ task_id: taskId, session: sessionArg }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).stopWork(args, ctx.caller),
});

export const contextAdd = defineTool({
  name: "arbeit_context_add",
  title: "Add context",
  description:
    "Record a decision, rationale, attempt, outcome, blocker, note, reference or user_input on a task. supersede_entry_id replaces a stale entry.",
  input: contextAddInput,
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).addContext(args, ctx.caller),
});

export const progressAdd = defineTool({
  name: "arbeit_progress_add",
  title: "Add progress steps",
  description: "Add concrete work steps to a task (optionally already completed).",
  input: () =>
    z.strictObject({
      task_id: taskId,
      items: z.array(text(LIMITS.progress_item).min(1)).min(1).max(LIMITS.progress_items),
      completed: z.boolean().optional(),
    }),
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).addProgress(args, ctx.caller),
});

export const progressComplete = defineTool({
  name: "arbeit_progress_complete",
  title: "Complete progress steps",
  description: "Mark progress items done by id.",
  input: () => z.strictObject({ item_ids: z.array(id("progress")).min(1).max(LIMITS.id_list) }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).completeProgress(args, ctx.caller),
});

export const relationship = defineTool({
  name: "arbeit_relationship",
  title: "Link or unlink tasks",
  description:
    "Add or remove a link: from parent_of/blocks/relates_to/duplicates/splits_from to (inverse names accepted and normalised).",
  input: relationshipInput,
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).relationship(args, ctx.caller),
});

export const query = defineTool({
  name: "arbeit_query",
  title: "Query tasks",
  description: `Named queries; filters go in params. ${queryGuide()}`,
  input: () =>
    z.strictObject({
      query: z.enum(QUERY_NAMES),
      params: z.record(z.string(), z.unknown()).optional(),
    }),
  annotations: READ,
  run: async (ctx, args) => (await ctx.service()).query(args, ctx.caller),
});
