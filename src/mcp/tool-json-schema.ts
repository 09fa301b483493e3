import { z } from "zod";
import { LIMITS } from "../schemas/limits.js";
import type { ToolDef } from "../tools/define.js";

export type JsonSchema = Record<string, unknown>;

/**
 * A tool's input as JSON Schema (draft-07, what MCP clients and the AI SDK expect), as models see
 * it. A model reads every schema on every turn, so what tells it nothing is left out: bounds no
 * well-formed call comes near (`minLength: 1`, as nobody means an empty title or name; the length
 * limits of names, keys and ids, LIMITS.name and under; a list of enum values as long as the enum,
 * reached only by repeating one), the `type` of an enum (its values say it), and
 * `additionalProperties: false` (a model sends the properties listed; hosts on the AI SDK close
 * every object that does not say otherwise). The limits a long text can reach stay, and every rule
 * is still enforced where the call is validated, unknown keys included; docs/tools.md shows the
 * schemas whole (inputJsonSchema).
 */
export function toolInputJsonSchema(tool: ToolDef): JsonSchema {
  return forModels(inputJsonSchema(tool.input)) as JsonSchema;
}

function forModels(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forModels);
  if (typeof node !== "object" || node === null) return node;
  const nullable = orNull(node as Record<string, unknown>);
  if (nullable) return forModels(nullable);
  const record = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === "minLength" && value === 1) continue;
    if (key === "maxLength" && typeof value === "number" && value <= LIMITS.name) continue;
    if (key === "additionalProperties" && value === false) continue;
    if (key === "type" && enumSaysType(record)) continue;
    if (key === "maxItems" && typeof value === "number" && value >= enumLength(record.items)) continue;
    out[key] = forModels(value);
  }
  return out;
}

const JSON_TYPE = (value: unknown) =>
  value === null ? "null" : Number.isInteger(value) ? "integer" : typeof value === "number" ? "number" : typeof value;

/** Whether the node's enum says its type: every value is of a type the node names. */
function enumSaysType(node: Record<string, unknown>): boolean {
  if (!Array.isArray(node.enum)) return false;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  return node.enum.every((value) => types.includes(JSON_TYPE(value)));
}

/** How many values an array's items may take (an enum's), else Infinity. */
function enumLength(items: unknown): number {
  const values = (items as { enum?: unknown } | undefined)?.enum;
  return Array.isArray(values) ? values.length : Number.POSITIVE_INFINITY;
}

/**
 * `anyOf: [{type: T, ...}, {type: "null"}]` (zod's nullable) said in the shorter form that means
 * the same: `type: [T, "null"]`, with null added to an enum. Undefined for any other node.
 */
function orNull(node: Record<string, unknown>): Record<string, unknown> | undefined {
  const options = node.anyOf;
  if (!Array.isArray(options) || options.length !== 2 || Object.keys(node).length !== 1) return undefined;
  const [value, empty] = options as Array<Record<string, unknown>>;
  if (JSON.stringify(empty) !== '{"type":"null"}' || typeof value?.type !== "string") return undefined;
  return {
    ...value,
    type: [value.type, "null"],
    ...(Array.isArray(value.enum) ? { enum: [...value.enum, null] } : {}),
  };
}

/**
 * Any zod input schema as JSON Schema. What zod adds that constrains nothing is left out, because
 * agents pay for every token of it on every turn: the `$schema` line (the keywords used mean the
 * same in draft-07 and 2020-12), the ±2^53 bounds on every integer and `propertyNames: {type:
 * "string"}` (JSON keys are strings). `additionalProperties: {}` on open objects (metadata) stays:
 * the AI SDK closes every object schema that lacks it, which would tell models metadata is empty.
 */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: "input", target: "draft-7" });
  return withoutNoise(json) as JsonSchema;
}

function withoutNoise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNoise);
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === "propertyNames" && JSON.stringify(value) === '{"type":"string"}') continue;
    out[key] = withoutNoise(value);
  }
  return out;
}
