import { z } from "zod";

/**
 * OpenCode builds its `z.object(args)` with its own bundled zod (4.1 / 4.4 in 1.18). That zod
 * validates our zod v4 schemas fine, but when it derives the JSON schema sent to the model it
 * cannot read this zod's checks, so lengths, patterns and ranges silently disappear (verified in
 * test/opencode). zod lets a schema supply its own JSON schema (`_zod.toJSONSchema`), so each
 * field is handed over as a thin view of our schema that answers with the JSON schema our zod
 * derives. Validation is untouched: the view inherits everything else from the real schema, and
 * invokeTool validates again with the catalogue's strict schema.
 */
export function opencodeArgs(shape: Readonly<Record<string, z.core.$ZodType>>): Record<string, z.core.$ZodType> {
  const args: Record<string, z.core.$ZodType> = {};
  for (const [key, field] of Object.entries(shape)) args[key] = withOwnJsonSchema(field);
  return args;
}

function withOwnJsonSchema(field: z.core.$ZodType): z.core.$ZodType {
  let json: Record<string, unknown>;
  try {
    const { $schema: _dialect, ...rest } = z.toJSONSchema(field, { io: "input", unrepresentable: "any" });
    json = rest;
  } catch {
    return field;
  }
  const internals = Object.create(field._zod, {
    toJSONSchema: { value: () => structuredClone(json), enumerable: false },
  });
  return Object.create(field, { _zod: { value: internals, enumerable: false } }) as z.core.$ZodType;
}
