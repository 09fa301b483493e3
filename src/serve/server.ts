import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { clientRange, VERSION_HEADER } from "../domain/client-versions.js";
import { guardEdges, requestTimeouts, sendRefusal } from "../http/edges.js";
import { listen } from "../http/listen.js";
import { HttpRefusal, malformed, methodRefused } from "../http/refusals.js";
import { requestTarget } from "../http/request-target.js";
import { refuseRepeatedHeaders } from "../http/single-headers.js";
import { type DeliveryOptions, STALE_SWEEPER, startWebhookDelivery } from "../notify/webhooks.js";
import type { SqlStore } from "../store/sql/database.js";
import type { TaskStore } from "../store/task-store.js";
import { actingAgent } from "../team/token-rules.js";
import { findTool } from "../tools/catalogue.js";
import { failure, toArbeitError } from "../tools/envelope.js";
import { allowedHosts, allowedOrigins, hostAllowed, originAllowed } from "../ui/server/security.js";
import { callWithToken, defaultList, parentSessions, type ServiceContext } from "./calls.js";
import { refuseUnservedClient } from "./client-version.js";
import { ServiceDashboard } from "./dashboard.js";
import { hookOutcome, hookRequest, runHookStep } from "./hook-endpoint.js";
import { Refusal, readJson, sendJson } from "./http.js";
import {
  callsOf,
  DEFAULT_LIMITS,
  DEFAULT_SESSION_IDLE_S,
  FailedTokens,
  type Limits,
  mcpCalls,
  RequestRate,
} from "./limits.js";
import { McpEndpoint, SESSION_HEADER } from "./mcp-endpoint.js";
import { ServiceMetrics } from "./metrics.js";
import { type LogFormat, requestLine } from "./request-log.js";
import { SessionOwners } from "./session-owners.js";
import { serviceReport } from "./status-endpoint.js";
import { type Bearer, TokenGate } from "./token-gate.js";

export interface ServiceOptions extends ServiceContext {
  host: string;
  /** 0: any free port. */
  port: number;
  version: string;
  /** Where the one line per request goes (stderr), without its line feed. */
  log: (line: string) => void;
  /** Each line as text (the default) or as one JSON object (docs/team.md#the-request-log). */
  logFormat?: LogFormat;
  /**
   * More Host values to answer to (`name` or `name:port`): the public name a reverse proxy
   * passes on, keeping the client's Host.
   */
  allowHosts?: string[];
  /** A certificate and its key (PEM): the service speaks HTTPS. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** Limits per token (docs/team.md#limits); DEFAULT_LIMITS when not given. */
  limits?: Limits;
  /** How long a request may take to arrive, headers and body (default 30 s). */
  requestTimeoutMs?: number;
  /** How often open MCP sessions are checked for a revoked token and for idleness. */
  revocationCheckMs?: number;
  /** How long an MCP session may sit idle (no request, no stream open) before it is closed (default an hour). */
  sessionIdleMs?: number;
  /**
   * Delivers the project's webhooks (`arbeit notify`) from this process while it runs (default
   * true); options tune how often it looks and its back-off.
   */
  webhooks?: boolean | DeliveryOptions;
}

export interface RunningService {
  url: string;
  port: number;
  /** Stops accepting requests, lets those in flight finish, then closes every MCP session. */
  close(): Promise<void>;
}

/** The methods the service answers: DELETE ends an MCP session. */
const METHODS = ["GET", "HEAD", "POST", "DELETE"];
const ALLOW = METHODS.join(", ");

/** What the request log says about one request, filled in as it is handled. */
interface RequestNote {
  /** The name the token acts as ("-" before a token was accepted). */
  who: string;
  /** The token's own name, once accepted. */
  token: string | null;
  tool: string;
  outcome: string;
}

/** `{tool, args, session?, parents?, list?}`: the body of POST /api/call. */
function callRequest(body: unknown): {
  tool: string;
  args: unknown;
  session: string | undefined;
  parents: string[];
  list: string | undefined;
} {
  const value = body as Record<string, unknown> | null;
  if (value === null || typeof value !== "object" || Array.isArray(value) || typeof value.tool !== "string")
    throw new Refusal(400, "INVALID_ARGUMENT", 'The body is {"tool": "<name>", "args": {...}, "session": "<id>"}.');
  if (value.session !== undefined && typeof value.session !== "string")
    throw new Refusal(400, "INVALID_ARGUMENT", "session must be a string.");
  const parents = parentSessions(value.parents);
  const list = defaultList(value.list);
  const extra = Object.keys(value).find((key) => !["tool", "args", "session", "parents", "list"].includes(key));
  if (extra !== undefined)
    throw new Refusal(
      400,
      "INVALID_ARGUMENT",
      `The body takes tool, args, session, parents and list only, not "${extra}".`,
    );
  return { tool: value.tool, args: value.args ?? {}, session: value.session as string | undefined, parents, list };
}

/** The JSON-RPC method of an MCP post, or the tool's name for tools/call: what the log names. */
function mcpNote(body: unknown): string {
  const message = (Array.isArray(body) ? body[0] : body) as { method?: unknown; params?: { name?: unknown } } | null;
  if (message?.method === "tools/call" && typeof message.params?.name === "string") return message.params.name;
  return typeof message?.method === "string" ? message.method : "-";
}

/**
 * `arbeit serve` (docs/team.md): one process in front of the project's store, on one port. POST
 * /api/call runs a tool and answers its envelope; /mcp is MCP over Streamable HTTP; GET /healthz
 * says whether the store answers. Everything but /healthz needs a token.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const store = options.service.store as unknown as TaskStore & SqlStore;
  const gate = new TokenGate(store);
  const context = { ...options, sessions: new SessionOwners(store), gate };
  const limits = options.limits ?? DEFAULT_LIMITS;
  // One limit on the streams a token holds open: its MCP sessions and its dashboard event streams.
  const mcp: McpEndpoint = new McpEndpoint(context, options.version, limits.sessions, (id) => dashboard.streamsOf(id));
  const dashboard = new ServiceDashboard(context, limits.sessions, (id) => mcp.sessionsOf(id));
  const rate = new RequestRate(limits.rate, limits.burst);
  const failedTokens = new FailedTokens();
  let hosts = new Set<string>();
  let origins = new Set<string>();
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const pooled = store as unknown as { poolUse?: () => { max: number; total: number; idle: number; waiting: number } };
  const metrics = new ServiceMetrics(options.version, () => ({
    mcpSessions: mcp.openSessions,
    liveStreams: dashboard.openStreams,
    pool: pooled.poolUse?.(),
  }));

  // The release and the clients it serves: asked before any token, so a client learns why it is refused.
  const release = { version: options.version, clients: clientRange(options.version).text };

  async function healthz(res: ServerResponse, note: RequestNote) {
    try {
      await store.transaction("read", (db) => db.get("SELECT 1 AS ok"));
      sendJson(res, 200, { success: true, data: { ok: true, store: "ok", ...release } });
    } catch {
      note.outcome = "store unavailable";
      sendJson(res, 503, { success: true, data: { ok: false, store: "unavailable", ...release } });
    }
  }

  async function apiCall(req: IncomingMessage, res: ServerResponse, bearer: Bearer, note: RequestNote) {
    const body = await readJson(req);
    const sent = body as { tool?: unknown; args?: unknown } | null;
    if (typeof sent?.tool === "string") note.tool = sent.tool;
    rate.take(bearer.token.id, callsOf(sent?.tool, sent?.args));
    const { tool: name, args, session, parents, list } = callRequest(body);
    const tool = findTool(name);
    if (!tool) throw new Refusal(400, "INVALID_ARGUMENT", `There is no tool named "${name}".`);
    const envelope = await callWithToken(context, bearer, tool, args, session, parents, list);
    note.outcome = envelope.success ? "ok" : envelope.error.code;
    sendJson(res, 200, envelope);
  }

  async function apiHook(req: IncomingMessage, res: ServerResponse, bearer: Bearer, note: RequestNote) {
    const request = hookRequest(await readJson(req));
    note.tool = request.hook;
    const envelope = await runHookStep(context, bearer, request);
    note.outcome = envelope.success ? (hookOutcome(request.hook, envelope.data) ?? "ok") : envelope.error.code;
    sendJson(res, 200, envelope);
  }

  async function route(req: IncomingMessage, res: ServerResponse, note: RequestNote) {
    if (req.headers.host === undefined) throw malformed("it has no Host header.");
    refuseRepeatedHeaders(req);
    // DNS rebinding: a foreign name made to resolve here still arrives with its own Host.
    if (!hostAllowed(req, hosts))
      throw new Refusal(403, "FORBIDDEN", "This service answers only to its own address (Host refused).");
    if (!originAllowed(req, origins))
      throw new Refusal(403, "FORBIDDEN", "Requests from web pages of other origins are refused.");
    const url = requestTarget(req.url);
    const path = url.pathname;
    if (!METHODS.includes(req.method ?? "")) throw methodRefused(ALLOW);
    if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD")) return healthz(res, note);
    refuseUnservedClient(req, path, options.version);
    // The dashboard's page and assets hold no data: they load without a token.
    if (dashboard.page(req.method ?? "", url, res)) return;
    const address = req.socket.remoteAddress ?? "-";
    // Only a token that was sent and refused counts as a guess; a request without one is no guess.
    const guess = async (error: unknown): Promise<never> => {
      if (req.headers.authorization !== undefined && error instanceof Refusal && error.status === 401) {
        note.who = "-";
        await failedTokens.failed(address);
      }
      throw error;
    };
    // A token known from earlier requests is read again by the call itself (CallGuard), in its own
    // transaction; every other request has it read here first. Not an MCP tools/call: its transport
    // answers 200 before the tool runs, and only a 401 ends the client's session on revocation.
    const folded = req.method === "POST" && (path === "/api/call" || path === "/api/hook");
    const bearer = await (folded ? gate.identify(req) : gate.check(req)).catch(guess);
    if (bearer.verified) failedTokens.succeeded(address);
    note.who = actingAgent(bearer.token);
    note.token = bearer.token.name;
    // A tool call or an MCP post is counted by the calls its body makes, once the body is read.
    const byBody = req.method === "POST" && (path === "/api/call" || path === "/mcp");
    if (!byBody) rate.take(bearer.token.id);
    if (folded) {
      await (path === "/api/call" ? apiCall : apiHook)(req, res, bearer, note).catch(guess);
      if (!bearer.verified) failedTokens.succeeded(address);
      return;
    }
    if (path === "/api/call" || path === "/api/hook") throw methodRefused("POST");
    if (path === "/mcp") {
      const body = req.method === "POST" ? await readJson(req) : undefined;
      if (body !== undefined) {
        note.tool = mcpNote(body);
        rate.take(bearer.token.id, mcpCalls(body));
      }
      return mcp.handle(req, res, bearer, body);
    }
    if (path === "/metrics") {
      if (req.method !== "GET") throw methodRefused("GET");
      // The service's load and errors are its operators' business: people's tokens, not agents'.
      if (bearer.token.kind !== "person")
        throw new Refusal(403, "FORBIDDEN", "/metrics answers people's tokens only, not an agent's.", [
          "Give the scraper a token of its own: `arbeit token create --person prometheus --read-only`.",
        ]);
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" });
      res.end(metrics.render());
      return;
    }
    if (path === "/api/status") {
      if (req.method !== "GET") throw methodRefused("GET");
      return sendJson(res, 200, { success: true, data: await serviceReport(store, options.version, bearer.token) });
    }
    if (path.startsWith("/api/")) return dashboard.api(url, req, res, bearer, note);
    throw new Refusal(404, "INVALID_ARGUMENT", `Nothing is served at ${path}: use /api/call, /mcp or /healthz.`);
  }

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const note: RequestNote = { who: "-", token: null, tool: "-", outcome: "" };
    res.setHeader(VERSION_HEADER, options.version);
    // An MCP client's GET and the dashboard's live GET are streams that stay open: shutting down does not wait for them.
    const counted = !(req.method === "GET" && (req.url?.startsWith("/mcp") || req.url?.startsWith("/api/live")));
    if (counted) inFlight++;
    res.once("close", () => {
      if (counted && --inFlight === 0) drained?.();
      const seconds = (performance.now() - started) / 1000;
      options.log(
        requestLine(options.logFormat ?? "text", {
          time: new Date().toISOString(),
          client: req.socket.remoteAddress ?? "-",
          ...note,
          method: req.method ?? "",
          target: req.url ?? "",
          status: res.statusCode,
          seconds,
        }),
      );
      let path = "";
      try {
        path = new URL(req.url ?? "", "http://x").pathname;
      } catch {}
      metrics.answered({
        path,
        status: res.statusCode,
        tool: note.tool,
        outcome: note.outcome,
        seconds,
        stream: !counted,
      });
    });
    route(req, res, note).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpRefusal) {
        note.outcome = error.code;
        sendRefusal(res, error);
        return;
      }
      if (error instanceof Refusal) {
        note.outcome = error.error.code;
        const challenge: Record<string, string> = error.status === 401 ? { "WWW-Authenticate": "Bearer" } : {};
        sendJson(res, error.status, error.envelope(), { ...challenge, ...error.headers });
        return;
      }
      const cause = toArbeitError(error);
      note.outcome = cause.code;
      sendJson(res, 500, failure(cause));
    });
  };
  const settings = requestTimeouts(options.requestTimeoutMs);
  const server = options.tls
    ? createTlsServer({ ...settings, cert: options.tls.cert, key: options.tls.key }, handler)
    : createServer(settings, handler);
  // Requests that never reach the handler get a refusal all the same.
  guardEdges(server, ALLOW);
  const port = await listen(server, options.port, options.host);
  hosts = allowedHosts(options.host, port, options.tls ? "https" : "http");
  origins = allowedOrigins(hosts, [options.tls ? "https" : "http"]);
  for (const name of options.allowHosts ?? []) hosts.add(name.toLowerCase());
  // A name a proxy passes on is reached by whatever scheme the proxy serves, which the service cannot see.
  for (const origin of allowedOrigins(options.allowHosts ?? [], ["https", "http"])) origins.add(origin);
  // Revocation reaches sessions that only listen (an open GET stream sends no request to check).
  const sweep = setInterval(() => {
    void mcp.closeRevoked((secret) => gate.stillActive(secret));
    void mcp.closeIdle(options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_S * 1000);
    void dashboard.closeRevoked((secret) => gate.stillActive(secret));
  }, options.revocationCheckMs ?? 1000);
  sweep.unref();
  // Webhooks go out from here, beside the requests: an agent's call only appends to the log, and
  // the deliverer reads it after each webhook's cursor. Any `arbeit ui` on the same store takes
  // events by the same cursor, so each event is sent once, by one of them.
  const webhooks = options.webhooks ?? true;
  const stopWebhooks =
    webhooks === false
      ? async () => {}
      : startWebhookDelivery(store, {
          freeExpiredClaims: () => options.service.freeExpiredClaims(STALE_SWEEPER),
          onDelivery: (outcome) => metrics.delivery(outcome),
          ...(webhooks === true ? {} : webhooks),
        });
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `${options.tls ? "https" : "http"}://${shown}:${port}`,
    port,
    async close() {
      clearInterval(sweep);
      await stopWebhooks();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      await mcp.close();
      dashboard.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

export { SESSION_HEADER };
