import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { registerTools } from "../mcp/server.js";
import { TOOLS } from "../tools/catalogue.js";
import { failure } from "../tools/envelope.js";
import { type CallContext, callWithToken } from "./calls.js";
import { Refusal } from "./http.js";
import { rateLimited } from "./limits.js";
import { type Bearer, invalidToken } from "./token-gate.js";

/**
 * The header a client sends to act in a session of its own choosing instead of the MCP session:
 * Claude Code's conversation id, say, so that its MCP calls and its hooks are one session.
 */
export const SESSION_HEADER = "x-arbeit-session";

interface OpenSession {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /** The token that opened the session: only it may go on using it. */
  tokenId: string;
  secret: string;
  /** Its requests in progress, open streams included: while any is, the session is in use. */
  active: number;
  /** When its last request ended (performance.now()): it has been idle since, unless one is active. */
  idleSince: number;
}

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * MCP over Streamable HTTP at /mcp: one MCP server and transport per MCP session, keyed by its
 * Mcp-Session-Id, serving the same catalogue as `arbeit mcp`. Every request is authenticated
 * before it reaches here; each tool call acts as the request's token.
 */
export class McpEndpoint {
  readonly #sessions = new Map<string, OpenSession>();

  constructor(
    private readonly context: CallContext,
    private readonly version: string,
    /** Streams one token may hold open: its MCP sessions and the others `otherStreams` counts. */
    private readonly maxSessions: number,
    /** The token's other open streams (the dashboard's live event streams). */
    private readonly otherStreams: (tokenId: string) => number = () => 0,
  ) {}

  /** The MCP sessions `tokenId` holds open. */
  sessionsOf(tokenId: string): number {
    let held = 0;
    for (const session of this.#sessions.values()) if (session.tokenId === tokenId) held++;
    return held;
  }

  get openSessions(): number {
    return this.#sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse, bearer: Bearer, body: unknown): Promise<void> {
    const id = headerValue(req.headers["mcp-session-id"]);
    let open = id === undefined ? undefined : this.#sessions.get(id);
    if (id !== undefined && !open)
      throw new Refusal(
        404,
        "INVALID_ARGUMENT",
        "There is no open MCP session with that Mcp-Session-Id; initialize again.",
      );
    if (open && open.tokenId !== bearer.token.id)
      throw new Refusal(403, "FORBIDDEN", "This MCP session was opened with another token.");
    if (!open) {
      if (req.method !== "POST" || !isInitializeRequest(body))
        throw new Refusal(400, "INVALID_ARGUMENT", "Start with an initialize request (no Mcp-Session-Id yet).");
      const held = this.sessionsOf(bearer.token.id) + this.otherStreams(bearer.token.id);
      if (held >= this.maxSessions)
        throw rateLimited(
          `This token holds ${held} open MCP sessions and dashboard streams, the most it may; nothing was opened. Close one (DELETE /mcp with its Mcp-Session-Id) or wait for one to end.`,
          1,
        );
      open = await this.#open(bearer);
    }
    const auth = {
      token: bearer.secret,
      clientId: bearer.token.id,
      scopes: [],
      extra: { token: bearer.token, bearer },
    };
    const session = open;
    session.active++;
    res.once("close", () => {
      session.active--;
      session.idleSince = performance.now();
    });
    await session.transport.handleRequest(Object.assign(req, { auth }), res, body);
  }

  async #open(bearer: Bearer): Promise<OpenSession> {
    const server = new McpServer({ name: "arbeit", version: this.version });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => `mcp-${randomUUID()}`,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, open);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.#sessions.delete(transport.sessionId);
    };
    registerTools(server, TOOLS, (tool, args, extra) => {
      // The request's token, read and found active as the request arrived (TokenGate.check).
      const bearer = extra.authInfo?.extra?.bearer as Bearer | undefined;
      if (!bearer) return Promise.resolve(failure(invalidToken(true).error));
      const chosen = headerValue(extra.requestInfo?.headers[SESSION_HEADER]);
      return callWithToken(this.context, bearer, tool, args, chosen ?? extra.sessionId);
    });
    const open: OpenSession = {
      transport,
      server,
      tokenId: bearer.token.id,
      secret: bearer.secret,
      active: 0,
      idleSince: performance.now(),
    };
    await server.connect(transport);
    return open;
  }

  /** Closes every session whose token no longer works (revoked or expired since it opened). */
  async closeRevoked(stillActive: (secret: string) => Promise<boolean>): Promise<void> {
    const verdicts = new Map<string, Promise<boolean>>();
    for (const open of [...this.#sessions.values()]) {
      let verdict = verdicts.get(open.secret);
      if (!verdict) {
        verdict = stillActive(open.secret).catch(() => true);
        verdicts.set(open.secret, verdict);
      }
      if (!(await verdict)) await open.server.close();
    }
  }

  /**
   * Closes every session idle for `idleMs` or longer: no request in progress and no stream open
   * since. A client that died without DELETE /mcp leaves such a session, and it would hold its
   * token's place for good; a request naming it afterwards is answered 404, so a live client
   * initializes again.
   */
  async closeIdle(idleMs: number): Promise<void> {
    const now = performance.now();
    const idle = [...this.#sessions].filter(([, open]) => open.active === 0 && now - open.idleSince >= idleMs);
    // Forgotten at once, before any request can find them again while they close.
    for (const [id] of idle) this.#sessions.delete(id);
    await Promise.all(idle.map(([, open]) => open.server.close()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map((open) => open.server.close()));
    this.#sessions.clear();
  }
}
