import { after, before } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/** A real MCP client connected to `node dist/cli/main.js mcp` running in `cwd`. */
export interface McpTestClient {
  client: Client;
  pid: number;
  stderr(): string;
  /** Calls a tool and returns the envelope from structuredContent, with isError and the text. */
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean; envelope: any; text: string }>;
  /** Like call, but fails unless the call succeeded; returns data. */
  ok(name: string, args?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export async function connectMcp(
  cwd: string,
  options: { env?: Record<string, string>; clientName?: string; args?: string[] } = {},
): Promise<McpTestClient> {
  // The transport passes only a safe default environment plus `env`, so no ARBEIT_* leaks in.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...(options.args ?? [])],
    cwd,
    env: options.env ?? {},
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => (stderr += chunk));
  const client = new Client({ name: options.clientName ?? "arbeit-test-client", version: "1.0.0" });
  await client.connect(transport);
  const call: McpTestClient["call"] = async (name, args = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: unknown;
      content: { type: string; text?: string }[];
    };
    return {
      isError: result.isError === true,
      envelope: result.structuredContent,
      text: result.content[0]?.text ?? "",
    };
  };
  return {
    client,
    pid: transport.pid!,
    stderr: () => stderr,
    call,
    async ok(name, args) {
      const { isError, envelope } = await call(name, args);
      if (isError || !envelope?.success) throw new Error(`${name} failed: ${JSON.stringify(envelope)}\n${stderr}`);
      return envelope.data;
    },
    close: () => client.close(),
  };
}

/**
 * A server in a fresh temp project for the tests of one `describe`: connected before them,
 * closed and removed after. Read `.mcp` and `.dir` inside the tests.
 */
export function serverInTempProject(options: { init?: boolean } = {}): { mcp: McpTestClient; dir: string } {
  const state = {} as { mcp: McpTestClient; dir: string; cleanup(): void };
  before(async () => {
    const temp = tempDir();
    state.dir = temp.dir;
    state.cleanup = temp.cleanup;
    state.mcp = await connectMcp(temp.dir);
    if (options.init) await state.mcp.ok("arbeit_init");
  });
  after(async () => {
    await state.mcp.close();
    state.cleanup();
  });
  return state;
}
