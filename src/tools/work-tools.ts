import { z } from "zod";
import { expectedVersion, id, identityName, passedArguments, taskId, text } from "../schemas/common.js";
import { contextAddInput, relationshipInput } from "../schemas/inputs.js";
import { LIMITS } from "../schemas/limits.js";
import { ok } from "../service/operation.js";
import { initProject } from "../service/project.js";
import { QUERY_NAMES, queryGuide } from "../service/queries.js";
import { defineTool, destructive, IDEMPOTENT_WRITE, READ, WRITE } from "./define.js";

/** Hosts pass their own session; this lets a caller name another (e.g. resuming a conversation). */
const sessionArg = () => identityName.optional().describe("Defaults to yours");

export const init = defineTool({
  name: "arbeit_init",
  title: "Initialise Arbeit",
  description: "Create .arbeit/ and its store in the project root; once, before other arbeit tools.",
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
  description: "Work on a task in this session: marks it in_progress, tracks files you touch; reserve: its files too.",
  input: () =>
    z.strictObject({
      task_id: taskId,
      session: sessionArg(),
      expected_version: expectedVersion.optional(),
      reserve: z.boolean().optional(),
    }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).startWork(args, ctx.caller),
});

export const stopWork = defineTool({
  name: "arbeit_task_stop_work",
  title: "Stop work",
  description: "Pause or end your work on a task; file tracking stops, the status stays.",
  input: () => z.strictObject({ task_id: taskId, session: sessionArg() }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).stopWork(args, ctx.caller),
});

export const contextAdd = defineTool({
  name: "arbeit_context_add",
  title: "Add context",
  description:
    "Record a decision, attempt, outcome or other context on a task; supersede_entry_id replaces a stale entry.",
  input: contextAddInput,
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).addContext(args, ctx.caller),
});

export const progressAdd = defineTool({
  name: "arbeit_progress_add",
  title: "Add progress steps",
  description: "Add work steps to a task (completed: already done).",
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
  description: "Add or remove a link: from_task_id <type> to_task_id (inverse types are turned around).",
  input: relationshipInput,
  annotations: destructive(WRITE),
  run: async (ctx, args) => (await ctx.service()).relationship(args, ctx.caller),
});

export const query = defineTool({
  name: "arbeit_query",
  title: "Query tasks",
  description: `Named queries. Params: ${queryGuide()} Lists: limit, cursor (from next_cursor), fields.`,
  input: () =>
    z.strictObject({
      query: z.enum(QUERY_NAMES),
      params: passedArguments().optional(),
    }),
  annotations: READ,
  run: async (ctx, args) => (await ctx.service()).query(args, ctx.caller),
});
