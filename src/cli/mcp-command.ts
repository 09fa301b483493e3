import { callerNames, envSetting, type GlobalOptions } from "./global-options.js";

const USAGE = `Usage: arbeit mcp [--db <file>] [--session <id>] [--agent <name>] [--list <id>]

Serves every Arbeit tool over MCP on stdin/stdout until stdin closes. The project is the nearest
.arbeit/ above the working directory (or --db / ARBEIT_DB). The connection is one session:
--session / ARBEIT_SESSION, else Claude Code's CLAUDE_CODE_SESSION_ID (so MCP calls and hooks of
one conversation share it), else mcp-<random>. Work is attributed to the client's name (or
--agent / ARBEIT_AGENT). While it runs, the claims and file reservations of its sessions stay held
however long one tool call takes; when stdin closes they lapse at once, and if the process dies,
within a minute (ARBEIT_HEARTBEAT_SECONDS, for tests). Setup: docs/mcp.md; many agents:
docs/multi-agent.md.
`;

/** `arbeit mcp`: the stdio MCP server. Nothing but JSON-RPC goes to stdout. */
export async function run(
  argv: string[],
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (argv.length > 0) {
    const { UsageError } = await import("./usage-error.js");
    throw new UsageError(`arbeit mcp takes no arguments, not ${JSON.stringify(argv[0])}.`, USAGE);
  }
  const names = callerNames(options, env);
  const [{ LineTransport }, { createMcpServer }, { version }, { connectionHeartbeat }] = await Promise.all([
    import("../mcp/stdio-transport.js"),
    import("../mcp/server.js"),
    import("../service/release.js"),
    import("../mcp/connection.js"),
  ]);
  const { server, connection } = createMcpServer({
    version: version(),
    cwd: process.cwd(),
    db: options.db ?? env.ARBEIT_DB,
    // Claude Code gives the MCP servers it starts its conversation's id, the same as its hooks'
    // session_id: MCP calls and hooks of one conversation are one session.
    session: names.session ?? envSetting(env, "CLAUDE_CODE_SESSION_ID"),
    agent: names.agent,
    listId: names.list,
    // The server lives exactly as long as the conversation that started it: its sessions' claims
    // stay held while it runs and lapse once it is gone.
    heartbeatSeconds: connectionHeartbeat(env),
  });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  // The stdio transport does not notice its input ending; a client that goes away closes stdin.
  const stop = () => void server.close();
  process.stdin.once("end", stop);
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await server.connect(new LineTransport());
  await closed;
  process.off("SIGTERM", stop);
  process.off("SIGINT", stop);
  await connection.close();
  process.stdin.destroy();
  return 0;
}
