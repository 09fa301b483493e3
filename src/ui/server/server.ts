import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ArbeitError } from "../../domain/errors.js";
import { guardEdges, readJsonBody, requestTimeouts, sendRefusal } from "../../http/edges.js";
import { listen } from "../../http/listen.js";
import { HttpRefusal, malformed, methodRefused } from "../../http/refusals.js";
import { requestTarget } from "../../http/request-target.js";
import { refuseRepeatedHeaders } from "../../http/single-headers.js";
import { type DeliveryOptions, STALE_SWEEPER, startWebhookDelivery } from "../../notify/webhooks.js";
import type { ArbeitService } from "../../service/arbeit-service.js";
import type { Caller } from "../../service/caller.js";
import type { SqlStore } from "../../store/sql/database.js";
import type { ToolContext } from "../../tools/define.js";
import { failure, invokeTool } from "../../tools/envelope.js";
import type { Me } from "../contract.js";
import { DashboardRoutes, type DashboardUser, send } from "./routes.js";
import { allowedHosts, allowedOrigins, bearerMatches, hostAllowed, newToken, originAllowed } from "./security.js";

/**
 * `arbeit ui`'s web server: the dashboard's routes (./routes.ts) for one person, the one who
 * started it, behind a random token that the URL it prints carries. Every edit is a call of the
 * tool catalogue (the same validation, events and version checks as any agent's) made as the
 * agent `human:<name>`.
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

const BODY_LIMIT = 1024 * 1024;

const tooLarge = () =>
  new HttpRefusal(413, "FIELD_TOO_LARGE", "The request body is larger than 1 MiB.", {
    // The rest of the body is not read: the connection ends with this answer.
    Connection: "close",
  });

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { service } = options;
  const token = newToken();
  const webhooks = options.webhooks ?? !options.readOnly;
  const stopWebhooks =
    webhooks !== false && "transaction" in service.store
      ? startWebhookDelivery(service.store as unknown as SqlStore, {
          freeExpiredClaims: () => service.freeExpiredClaims(STALE_SWEEPER),
          ...(webhooks === true ? {} : webhooks),
        })
      : async () => {};
  const routes = new DashboardRoutes({
    service,
    engine: options.engine,
    location: options.location,
    signIn: false,
    readBody: (req) => readJsonBody(req, BODY_LIMIT, tooLarge),
    pollMs: options.pollMs,
  });
  const caller: Caller = { session: null, agent: `human:${options.person}` };
  const toolContext: ToolContext = {
    caller,
    cwd: options.cwd,
    db: options.db,
    service: async () => service,
  };
  // One person for every request: the one who started `arbeit ui`.
  const user: DashboardUser = {
    agent: caller.agent!,
    readOnly: options.readOnly,
    async call(tool, args) {
      if (options.readOnly && !tool.annotations.readOnlyHint)
        throw new HttpRefusal(403, "READ_ONLY", "This dashboard was started with --read-only: it makes no changes.");
      return invokeTool(tool, args, toolContext);
    },
  };
  let hosts = new Set<string>();
  let origins = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.headers.host === undefined) throw malformed("it has no Host header.");
    refuseRepeatedHeaders(req);
    if (!hostAllowed(req, hosts))
      throw new HttpRefusal(
        403,
        "FORBIDDEN_HOST",
        "This server answers only to its own address (Host header refused).",
      );
    const url = requestTarget(req.url);
    const method = req.method ?? "";
    if (method !== "GET" && method !== "HEAD" && method !== "POST") throw methodRefused("GET, HEAD, POST");
    if (url.pathname.startsWith("/api/")) {
      if (!bearerMatches(req, token))
        throw new HttpRefusal(401, "UNAUTHORIZED", "Open the URL that `arbeit ui` printed: it carries the token.");
      if (method === "POST" && !originAllowed(req, origins))
        throw new HttpRefusal(403, "FORBIDDEN_ORIGIN", "Changes are accepted only from this dashboard's own pages.");
      return routes.api(method, url, req, res, user);
    }
    if (routes.page(method, url, res)) return;
    if (method === "POST") throw new HttpRefusal(404, "NOT_FOUND", `Nothing to post at ${url.pathname}.`);
    send(res, 404, "text/plain; charset=utf-8", "Not found.\n");
  }

  const server = createServer(requestTimeouts(options.requestTimeoutMs), (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpRefusal) sendRefusal(res, error);
      else {
        const envelope = failure(error);
        const status = error instanceof ArbeitError ? 400 : 500;
        send(res, status, "application/json; charset=utf-8", JSON.stringify(envelope));
      }
    });
  });
  // Requests that never reach the handler get a refusal all the same.
  guardEdges(server, "GET, HEAD, POST");
  const port = await listen(server, options.port, options.host);
  hosts = allowedHosts(options.host, port);
  origins = allowedOrigins(hosts, ["http"]);
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  // The token rides in the fragment, which a browser never sends to any server; the page moves
  // it into storage of its own origin and out of the address bar.
  const url = new URL(`http://${shown}:${port}/`);
  url.hash = `token=${token}`;
  return {
    url: url.href,
    server,
    close: async () => {
      routes.close();
      await stopWebhooks();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
