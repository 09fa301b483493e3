import { toolInputJsonSchema } from "../mcp/tool-json-schema.js";
import type { ToolDef } from "../tools/define.js";

/**
 * A Standard Schema (standardschema.dev, with its JSON Schema extension) that the AI SDK accepts
 * as a tool's `inputSchema`. It shows the model the tool's real JSON Schema but accepts any input:
 * validation happens in invokeTool, so a bad call comes back to the model as our envelope
 * (INVALID_STATUS with the valid values, TITLE_REQUIRED, ...) rather than as the SDK's generic
 * tool error. Being a plain object, it needs nothing from `ai` at run time.
 */
export interface PassthroughSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: "arbeit";
    validate(value: unknown): { value: unknown };
    readonly jsonSchema: {
      input(options: { target: string }): Record<string, unknown>;
      output(options: { target: string }): Record<string, unknown>;
    };
  };
}

export function passthroughSchema(tool: ToolDef): PassthroughSchema {
  const schema = () => toolInputJsonSchema(tool);
  return {
    "~standard": {
      version: 1,
      vendor: "arbeit",
      validate: (value) => ({ value }),
      jsonSchema: { input: schema, output: schema },
    },
  };
}
