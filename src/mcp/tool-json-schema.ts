import { z } from "zod";
import type { ToolDef } from "../tools/define.js";

export type JsonSchema = Record<string, unknown>;

/**
 * A tool's input as JSON Schema (draft-07, what MCP clients and the AI SDK expect). The one
 * conversion every generated surface (MCP, AI SDK, docs) shares.
 */
export function toolInputJsonSchema(tool: ToolDef): JsonSchema {
  return inputJsonSchema(tool.input);
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
