import type { ToolAnnotations as McpToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { ToolAnnotations } from "../tools/define.js";

/**
 * A tool's annotations as MCP lists them, saying only what differs from the spec's defaults
 * (readOnlyHint false, destructiveHint true, idempotentHint false): destructive and idempotent
 * mean nothing on a read-only tool, and every listed token is paid by the client on every turn.
 * destructiveHint stays explicit on every writing tool, so a client that ignores the defaults
 * still reads it right.
 */
export function mcpAnnotations(annotations: ToolAnnotations): McpToolAnnotations {
  if (annotations.readOnlyHint) return { readOnlyHint: true };
  return {
    destructiveHint: annotations.destructiveHint,
    ...(annotations.idempotentHint ? { idempotentHint: true } : {}),
  };
}
