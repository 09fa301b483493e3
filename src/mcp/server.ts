/**
 * The MCP server, generated from the tool catalogue: every tool under its own name, with its
 * title, description, input schema and annotations. Each call runs through invokeTool (or, in a
 * checkout that uses an Arbeit service, goes to it), so an MCP client gets the same envelope as
 * every other front end, as `structuredContent` and as compact JSON text, with `isError` on failure.
 *
 *   const { server, connection } = createMcpServer({ cwd: process.cwd(), version: "0.1.0" });
 *   await server.connect(new StdioServerTransport());
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { TOOLS } from "../tools/catalogue.js";
import type { ToolDef } from "../tools/define.js";
import type { Envelope } from "../tools/envelope.js";
import { mcpAnnotations } from "./annotations.js";
import { type Connection, type ConnectionOptions, openConnection } from "./connection.js";
import { listedInputSchema } from "./listed-input-schema.js";

export interface McpServerOptions extends ConnectionOptions {
  /** Reported to clients in the initialize handshake. */
  version: string;
  /** The tools to serve; the whole catalogue unless given. */
  tools?: readonly ToolDef[];
}

/** The one place an envelope becomes an MCP tool result. */
export function toCallToolResult(envelope: Envelope): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(envelope) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: !envelope.success,
  };
}

/** Runs one call of `tool` for an MCP request; `extra` is the request's (its session, auth and headers). */
export type McpCall = (
  tool: ToolDef,
  args: unknown,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
) => Promise<Envelope>;

/**
 * Lists every tool on `server` under its own name, title, description, input schema and
 * annotations, each call answered by `call`: the one definition of Arbeit's MCP tools, for the
 * stdio server and the service's `/mcp` alike.
 */
export function registerTools(server: McpServer, tools: readonly ToolDef[], call: McpCall): void {
  for (const tool of tools) {
    const registered = server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: listedInputSchema(tool),
        annotations: mcpAnnotations(tool.annotations),
      },
      async (args, extra) => toCallToolResult(await call(tool, args, extra)),
    );
    // registerTool lists every tool with `execution: {taskSupport: "forbidden"}`, which is what an
    // absent field means anyway (MCP spec); leaving it out saves clients ~10 tokens a tool.
    registered.execution = undefined;
  }
}

export function createMcpServer(options: McpServerOptions): { server: McpServer; connection: Connection } {
  const server = new McpServer({ name: "arbeit", version: options.version });
  const connection = openConnection(options);
  registerTools(server, options.tools ?? TOOLS, (tool, args, extra) => {
    // The client's name is known only once the handshake is done, so it is read per call.
    const toolUseId = (extra._meta as Record<string, unknown> | undefined)?.["claudecode/toolUseId"];
    const ctx = connection.context(server.server.getClientVersion()?.name, toolUseId);
    return connection.call(tool, args, ctx);
  });
  return { server, connection };
}
