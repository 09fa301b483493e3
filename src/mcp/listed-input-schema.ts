import { z } from "zod";
import type { ToolDef } from "../tools/define.js";
import { toolInputJsonSchema } from "./tool-json-schema.js";

/**
 * The input schema a tool is registered with on the MCP server.
 *
 * McpServer validates arguments against the registered zod schema *before* our handler runs and
 * turns a failure into its own `isError` text ("Input validation error: ..."), with no envelope
 * and none of our codes. An agent that sends `status: "done"` should get INVALID_STATUS and the
 * valid values, exactly as on every other front end. So the server registers a schema
 * that accepts any object (`looseObject({})`) but carries the tool's real JSON Schema as zod
 * metadata: zod merges `.meta()` into its JSON Schema output, so tools/list still shows clients
 * the exact parameters, enums and limits, while validation happens once, in invokeTool, which
 * returns our envelope. (Overriding McpServer's private validation or replacing its call handler
 * would depend on SDK internals; this uses only registerTool and documented zod behaviour.)
 * `$schema: undefined` keeps the SDK's converter from adding its `$schema` line back, and
 * `additionalProperties: undefined` the loose object's own `{}`, which would tell a model any key
 * goes (see toolInputJsonSchema for why both are left out).
 */
export function listedInputSchema(tool: ToolDef): z.ZodObject {
  return z.looseObject({}).meta({ additionalProperties: undefined, ...toolInputJsonSchema(tool), $schema: undefined });
}
