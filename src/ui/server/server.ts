import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ArbeitError } from "../../domain/errors.js";
import { guardEdges, readJsonBody, requestTimeouts, sendRefusal } from "../../http/edges.js";
import { listen } from "../../http/listen.js";
import { HttpRefusal, malformed, methodRefused } from "../../http/refusals.js";
import { requestTarget } from "../../http/request-target.js";
import { type DeliveryOptions, startWebhookDelivery } from "../../notify/webhooks.js";
import { readActivity } from "../../service/activity.js";
import type { ArbeitService } from "../../service/arbeit-service.js";
import type { Caller } from "../../service/caller.js";
import { readHome } from "../../service/home.js";
import { newestSeq, readAgents, readInbox, readOverview } from "../../service/overview.js";
import type { SqlStore } from "../../store/sql/database.js";
import { findTool } from "../../tools/catalogue.js";
import type { ToolContext } from "../../tools/define.js";
import { failure, invokeTool } from "../../tools/envelope.js";
import type { Me } from "../contract.js";
import { loadAssets, NOT_BUILT, SHELL } from "./assets.js";
import { LiveFeed } from "./live.js";
import { allowedHosts, bearerMatches, hostAllowed, newToken, originAllowed, SECURITY_HEADERS } from "./security.js";

/**
 * `arbeit ui`'s web server: the page, the reads behind each view, live change notices, and every
 * edit as a call of the tool catalogue (the same validation, events and version checks as any
 * agent's) made as the agent `human:<name>`.
 */

export interface DashboardOptions {
  service: ArbeitService;
  /** The person's name: edits are made as the agent `human:<name>`. */
  person: string;
  readOnly: boolean;
  host: string;
  port: number;
  cwd: string;
  db?: string | undefined;
  engine: Me["engine"];
  location: string;
  /** How often the live feed looks for changes. */
  pollMs?: number;
  /**
   * Delivers the project's webhooks (`arbeit notify`) while the dashboard runs; default: unless
   * read-only. Options tune how often it looks and its back-off.
   */
  webhooks?: boolean | DeliveryOptions;
  /**
   * How long a request may take to arrive, headers and body (default 30 s). A page's event
   * stream is not cut by it: its request is complete once its headers are in.
   */
  requestTimeoutMs?: number;
}

export interface Dashboard {
  /** The URL to open: it carries the token. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Views the page draws; each has its own URL, and every one is answered with the same document. */
const VIEW_PATH = /^\/(?:|board|tree|graph|agents|activity|inbox|task\/[^/]+)$/;
const BODY_LIMIT = 1024 * 1024;

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": type, "Cache-Control": "no-store", ...headers });
  res.end(body);
}

const sendJson = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value));

const refuse = sendRefusal;

const tooLarge = () =>
  new HttpRefusal(413, "FIELD_TOO_LARGE", "The request body is larger than 1 MiB.", {
    // The rest of the body is not read: the connection ends with this answer.
    Connection: "close",
  });

function optionalInt(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new HttpRefusal(400, "INVALID_ARGUMENT", `${name} must be a whole number.`);
  return Number(raw);
}

const optionalText = (url: URL, name: string): string | undefined => url.searchParams.get(name) || undefined;

/** A time bound: a date (YYYY-MM-DD, its midnight UTC) or an ISO 8601 time, as the store's UTC text. */
function optionalTime(url: URL, name: string): string | undefined {
  const raw = optionalText(url, name);
  if (raw === undefined) return undefined;
  const at = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00.000Z`) : Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at))
    throw new HttpRefusal(400, "INVALID_ARGUMENT", `${name} must be a date (YYYY-MM-DD) or an ISO 8601 time.`);
  return new Date(at).toISOString();
}

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { service } = options;
  const token = newToken();
  const assets = loadAssets();
  const live = new LiveFeed(() => newestSeq(service.store), options.pollMs);
  const webhooks = options.webhooks ?? !options.readOnly;
  const stopWebhooks =
    webhooks !== false && "transaction" in service.store
      ? startWebhookDelivery(service.store as unknown as SqlStore, webhooks === true ? {} : webhooks)
      : async () => {};
  const caller: Caller = { session: null, agent: `human:${options.person}` };
  const toolContext: ToolContext = {
    caller,
    cwd: options.cwd,
    db: options.db,
    service: async () => service,
  };
  let hosts = new Set<string>();

  const reads: Record<string, (url: URL) => Promise<unknown>> = {
    "/api/me": async () =>
      ({
        agent: caller.agent!,
        read_only: options.readOnly,
        engine: options.engine,
        location: options.location,
        seq: await newestSeq(service.store),
      }) satisfies Me,
    "/api/overview": (url) => readOverview(service.store, optionalText(url, "list"), optionalInt(url, "since")),
    "/api/agents": () => readAgents(service.store),
    "/api/inbox": () => readInbox(service.store),
    "/api/home": () => readHome(service.store),
    "/api/activity": (url) =>
      readActivity(service.store, {
        before: optionalInt(url, "before"),
        limit: optionalInt(url, "limit"),
        task_id: optionalText(url, "task"),
        agent: optionalText(url, "agent"),
        session_id: optionalText(url, "session"),
        event_types: optionalText(url, "event")?.split(","),
        from: optionalTime(url, "from"),
        to: optionalTime(url, "to"),
        text: optionalText(url, "q"),
      }),
  };

  async function callTool(name: string, req: IncomingMessage, res: ServerResponse) {
    const tool = findTool(name);
    if (!tool) {
      refuse(res, new HttpRefusal(404, "NOT_FOUND", `There is no tool ${name}.`));
      return;
    }
    if (options.readOnly && !tool.annotations.readOnlyHint) {
      refuse(
        res,
        new HttpRefusal(403, "READ_ONLY", "This dashboard was started with --read-only: it makes no changes."),
      );
      return;
    }
    const args = await readJsonBody(req, BODY_LIMIT, tooLarge);
    sendJson(res, 200, await invokeTool(tool, args, toolContext));
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.headers.host === undefined) throw malformed("it has no Host header.");
    if (!hostAllowed(req, hosts))
      throw new HttpRefusal(
        403,
        "FORBIDDEN_HOST",
        "This server answers only to its own address (Host header refused).",
      );
    const url = requestTarget(req.url);
    const method = req.method ?? "";
    if (method !== "GET" && method !== "HEAD" && method !== "POST") throw methodRefused("GET, HEAD, POST");
    if (url.pathname.startsWith("/api/")) return api(method, url, req, res);
    // The page and its assets hold no data: they load without the token, then ask /api/* with it.
    if (method === "POST") throw new HttpRefusal(404, "NOT_FOUND", `Nothing to post at ${url.pathname}.`);
    if (url.pathname.startsWith("/assets/")) {
      const asset = assets?.get(url.pathname.slice("/assets/".length));
      if (asset) return send(res, 200, asset.type, asset.body, { "Cache-Control": "no-cache" });
      return send(res, 404, "text/plain; charset=utf-8", "Not found.\n");
    }
    if (VIEW_PATH.test(url.pathname)) return send(res, 200, "text/html; charset=utf-8", assets ? SHELL : NOT_BUILT);
    send(res, 404, "text/plain; charset=utf-8", "Not found.\n");
  }

  async function api(method: string, url: URL, req: IncomingMessage, res: ServerResponse) {
    if (!bearerMatches(req, token))
      throw new HttpRefusal(401, "UNAUTHORIZED", "Open the URL that `arbeit ui` printed: it carries the token.");
    if (method === "POST") {
      if (!originAllowed(req, hosts))
        throw new HttpRefusal(403, "FORBIDDEN_ORIGIN", "Changes are accepted only from this dashboard's own pages.");
      const tool = /^\/api\/tools\/([a-z_]{1,64})$/.exec(url.pathname);
      if (tool) return callTool(tool[1]!, req, res);
      throw new HttpRefusal(404, "NOT_FOUND", `Nothing to post at ${url.pathname}.`);
    }
    if (url.pathname === "/api/live") {
      if (method === "HEAD") return send(res, 200, "text/event-stream; charset=utf-8", "");
      return live.add(res);
    }
    const read = reads[url.pathname];
    if (read) return sendJson(res, 200, { success: true, data: await read(url) });
    throw new HttpRefusal(404, "NOT_FOUND", `No such read: ${url.pathname}.`);
  }

  const server = createServer(requestTimeouts(options.requestTimeoutMs), (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpRefusal) refuse(res, error);
      else {
        const envelope = failure(error);
        const status = error instanceof ArbeitError ? 400 : 500;
        sendJson(res, status, envelope);
      }
    });
  });
  // Requests that never reach the handler get a refusal all the same.
  guardEdges(server, "GET, HEAD, POST");
  const port = await listen(server, options.port, options.host);
  hosts = allowedHosts(options.host, port);
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  // The token rides in the fragment, which a browser never sends to any server; the page moves
  // it into storage of its own origin and out of the address bar.
  const url = new URL(`http://${shown}:${port}/`);
  url.hash = `token=${token}`;
  return {
    url: url.href,
    server,
    close: async () => {
      live.close();
      await stopWebhooks();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
