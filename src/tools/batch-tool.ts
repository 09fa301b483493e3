import { z } from "zod";
import { ArbeitError } from "../domain/errors.js";
import { idKindOfPattern } from "../domain/ids.js";
import type { Warning } from "../domain/types.js";
import { passedArguments } from "../schemas/common.js";
import { LIMITS } from "../schemas/limits.js";
import { fromZodError } from "../schemas/zod-errors.js";
import { defineTool, destructive, type ToolDef, WRITE } from "./define.js";
import { toArbeitError } from "./envelope.js";

/**
 * arbeit_batch: several writes as one, all or nothing. Each operation is an ordinary tool call,
 * validated and run by the tool's own definition inside one transaction; the first that fails
 * rolls back every earlier one. A later operation refers to an earlier one's new id as "$<ref>" in
 * a field that holds ids; anywhere else a string is taken as it is.
 */

/**
 * The tools a batch may hold: every write of the catalogue, a new one included, but setting up
 * the store, the session's own resume (its cursor is the session's, not the task graph's) and a
 * batch inside a batch.
 */
const NOT_BATCHED = new Set(["arbeit_init", "arbeit_resume", "arbeit_batch"]);

const batchable = (tools: readonly ToolDef[]) =>
  tools.filter((tool) => !tool.annotations.readOnlyHint && !NOT_BATCHED.has(tool.name));

const REF = /^[\w-]{1,64}$/;
const REF_USE = /^\$([\w-]{1,64})$/;

const batchInput = (names: [string, ...string[]]) =>
  z.strictObject({
    operations: z
      .array(
        z.strictObject({
          tool: z.enum(names),
          args: passedArguments(),
          ref: z.string().regex(REF, "a name of letters, digits, _ or - (at most 64)").optional(),
        }),
      )
      .min(1)
      .max(LIMITS.batch_operations),
  });

type Operation = { tool: string; args: Record<string, unknown>; ref?: string | undefined };

/**
 * The fields of a tool that hold ids (task_id, parent_id, blocked_by, supersede_entry_id,
 * item_ids, from_task_id, to_task_id...), read from its schema: a text field whose pattern is an
 * id's, alone, nullable or in a list. Only these take "$<ref>"; every other string is content.
 */
const idFieldsOf = new WeakMap<ToolDef, Set<string>>();

function idFields(tool: ToolDef): Set<string> {
  let fields = idFieldsOf.get(tool);
  if (fields === undefined) {
    const json = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as {
      properties?: Record<string, IdSchema>;
    };
    fields = new Set(Object.keys(json.properties ?? {}).filter((key) => holdsIds(json.properties![key]!)));
    idFieldsOf.set(tool, fields);
  }
  return fields;
}

type IdSchema = { pattern?: string; items?: IdSchema; anyOf?: IdSchema[] };

function holdsIds(schema: IdSchema): boolean {
  if (idKindOfPattern(schema.pattern)) return true;
  if (schema.items) return holdsIds(schema.items);
  return schema.anyOf?.some(holdsIds) ?? false;
}

/** A task-scoped memory names its task in scope_id, a text field (other scopes name a list or an agent). */
const namesTask = (key: string, args: Record<string, unknown>) => key === "scope_id" && args.scope === "task";

/** The operation's arguments with each "$<ref>" in an id field replaced by that ref's id. */
function substitute(tool: ToolDef, args: Record<string, unknown>, ids: Map<string, string>, index: number) {
  const fields = idFields(tool);
  const resolve = (value: unknown) => (typeof value === "string" ? resolveRef(value, ids, index) : value);
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => {
      if (!fields.has(key) && !namesTask(key, args)) return [key, value];
      return [key, Array.isArray(value) ? value.map(resolve) : resolve(value)];
    }),
  );
}

function resolveRef(value: string, ids: Map<string, string>, index: number): string {
  const name = REF_USE.exec(value)?.[1];
  if (name === undefined) return value;
  const id = ids.get(name);
  if (id === undefined) {
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      `Operation ${index} names $${name}, which no earlier operation defines.`,
      {
        suggestions: ['Give the operation that creates it `ref: "<name>"`, and put it earlier in the list.'],
        details: { operation_index: index, ref: name },
      },
    );
  }
  return id;
}

/**
 * The id of what an operation created: the `id` of the one record its answer holds (task, entry,
 * memory...), or of the only item of the one list it holds (a progress_add of one step).
 */
function newId(data: unknown): string | undefined {
  if (data === null || typeof data !== "object") return undefined;
  for (const value of Object.values(data)) {
    const record = Array.isArray(value) && value.length === 1 ? value[0] : value;
    if (record !== null && typeof record === "object" && typeof (record as { id?: unknown }).id === "string") {
      return (record as { id: string }).id;
    }
  }
  return undefined;
}

/** An operation's failure, named by its place in the list; its code, advice and details are kept. */
function failedAt(index: number, tool: string, error: unknown): ArbeitError {
  const cause = toArbeitError(error);
  return new ArbeitError(cause.code, `Operation ${index} (${tool}) failed, so nothing was written: ${cause.message}`, {
    suggestions: cause.suggestions,
    details: { ...cause.details, operation_index: index, tool },
  });
}

/**
 * The batch tool over the catalogue `tools` (a function: the catalogue lists the batch tool too,
 * so it is read only once the catalogue is built).
 */
export const batchTool = (tools: () => readonly ToolDef[]) =>
  defineTool({
    name: "arbeit_batch",
    title: "Several writes at once",
    description:
      'Up to 100 write operations in one transaction, all or nothing. A later operation uses an earlier one\'s new id as "$<ref>" in an id field (task_id, parent_id, blocked_by...); other strings are literal.',
    input: () => batchInput(batchable(tools()).map((tool) => tool.name) as [string, ...string[]]),
    // It can run arbeit_task_delete and the other destructive tools.
    annotations: destructive(WRITE),
    run: async (ctx, { operations }) => {
      const service = await ctx.service();
      const refs = new Set<string>();
      for (const [index, operation] of operations.entries()) {
        if (operation.ref === undefined) continue;
        if (refs.has(operation.ref)) {
          throw new ArbeitError("INVALID_ARGUMENT", `Operation ${index} reuses ref "${operation.ref}".`, {
            details: { operation_index: index, ref: operation.ref },
          });
        }
        refs.add(operation.ref);
      }
      return service.atomically(async () => {
        const ids = new Map<string, string>();
        const results: Array<{ tool: string; ref?: string; data: unknown }> = [];
        const warnings: Warning[] = [];
        for (const [index, operation] of operations.entries()) {
          const tool = batchable(tools()).find((candidate) => candidate.name === operation.tool)!;
          const { data, warnings: own } = await runOperation(ctx, tool, operation, index, ids);
          if (operation.ref !== undefined) {
            const id = newId(data);
            if (id === undefined) {
              throw failedAt(
                index,
                operation.tool,
                new ArbeitError("INVALID_ARGUMENT", `It has ref "${operation.ref}" but creates nothing with an id.`),
              );
            }
            ids.set(operation.ref, id);
          }
          results.push({ tool: operation.tool, ...(operation.ref ? { ref: operation.ref } : {}), data });
          warnings.push(...own.map((warning) => ({ ...warning, message: `Operation ${index}: ${warning.message}` })));
        }
        return { data: { results }, warnings };
      });
    },
  });

async function runOperation(
  ctx: Parameters<ToolDef["run"]>[0],
  tool: ToolDef,
  operation: Operation,
  index: number,
  ids: Map<string, string>,
) {
  try {
    const args = substitute(tool, operation.args, ids, index);
    if ("request_id" in args || "session" in args) {
      throw new ArbeitError(
        "INVALID_ARGUMENT",
        "An operation takes no request_id or session of its own: the batch is one call, retried by its own request_id.",
      );
    }
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) throw fromZodError(parsed.error);
    return await tool.run(ctx, parsed.data);
  } catch (error) {
    if (error instanceof ArbeitError && error.details?.operation_index === index) throw error;
    throw failedAt(index, operation.tool, error);
  }
}
