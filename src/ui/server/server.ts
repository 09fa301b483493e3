import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ArbeitError } from "../../domain/errors.js";
import type { ArbeitService } from "../../service/arbeit-service.js";
import type { Caller } from "../../service/caller.js";
import { newestSeq, readActivity, readAgents, readInbox, readOverview } from "../../service/overview.js";
import { findTool } from "../../tools/catalogue.js";
import type { ToolContext } from "../../tools/define.js";
import { failure, invokeTool } from "../../tools/envelope.js";
import type { Me } from "../contract.js";
import { loadAssets, NOT_BUILT, SHELL } from "./assets.js";
import { LiveFeed } from "./live.js";
import {
  allowedHosts,
  cookieName,
  hostAllowed,
  newToken,
  originAllowed,
  SECURITY_HEADERS,
  tokenSource,
} from "./security.js";

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

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: "INVALID_ARGUMENT" | "FIELD_TOO_LARGE",
    message: string,
  ) {
    super(message);
  }
}

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

/**
 * Codes of the dashboard's own refusals (docs/dashboard.md), beside the tools' codes: no token,
 * a foreign Host or Origin, a change asked of a read-only dashboard, nothing at that path.
 */
export type RefusalCode = "UNAUTHORIZED" | "FORBIDDEN_HOST" | "FORBIDDEN_ORIGIN" | "READ_ONLY" | "NOT_FOUND";

const refusal = (code: RefusalCode | "INVALID_ARGUMENT" | "FIELD_TOO_LARGE", message: string) => ({
  success: false,
  error: { code, message },
});

async function readBody(req: IncomingMessage): Promise<unknown> {
  const type = req.headers["content-type"] ?? "";
  // A JSON body cannot be sent by a plain HTML form: one more wall against cross-site posts.
  if (!type.toLowerCase().startsWith("application/json"))
    throw new HttpRefusal(
      415,
      "INVALID_ARGUMENT",
      "Send the tool's arguments as JSON (Content-Type: application/json).",
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new HttpRefusal(413, "FIELD_TOO_LARGE", "The request body is larger than 1 MiB.");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpRefusal(400, "INVALID_ARGUMENT", "The request body is not valid JSON.");
  }
}

function optionalInt(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new HttpRefusal(400, "INVALID_ARGUMENT", `${name} must be a whole number.`);
  return Number(raw);
}

const optionalText = (url: URL, name: string): string | undefined => url.searchParams.get(name) || undefined;

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { service } = options;
  const token = newToken();
  const assets = loadAssets();
  const live = new LiveFeed(() => newestSeq(service.store), options.pollMs);
  const caller: Caller = { session: null, agent: `human:${options.person}` };
  const toolContext: ToolContext = {
    caller,
    cwd: options.cwd,
    db: options.db,
    service: async () => service,
  };
  let hosts = new Set<string>();
  let port = 0;

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
    "/api/activity": (url) =>
      readActivity(service.store, {
        before: optionalInt(url, "before"),
        limit: optionalInt(url, "limit"),
        task_id: optionalText(url, "task"),
      }),
  };

  async function callTool(name: string, req: IncomingMessage, res: ServerResponse) {
    const tool = findTool(name);
    if (!tool) {
      sendJson(res, 404, refusal("NOT_FOUND", `There is no tool ${name}.`));
      return;
    }
    if (options.readOnly && !tool.annotations.readOnlyHint) {
      sendJson(res, 403, refusal("READ_ONLY", "This dashboard was started with --read-only: it makes no changes."));
      return;
    }
    const args = await readBody(req);
    sendJson(res, 200, await invokeTool(tool, args, toolContext));
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (!hostAllowed(req, hosts)) {
      sendJson(
        res,
        403,
        refusal("FORBIDDEN_HOST", "This server answers only to its own address (Host header refused)."),
      );
      return;
    }
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    const source = tokenSource(req, url, token, port);
    if (!source) {
      sendJson(res, 401, refusal("UNAUTHORIZED", "Open the URL that `arbeit ui` printed: it carries the token."));
      return;
    }
    const method = req.method ?? "GET";
    if (method === "POST") {
      if (!originAllowed(req, hosts)) {
        sendJson(res, 403, refusal("FORBIDDEN_ORIGIN", "Changes are accepted only from this dashboard's own pages."));
        return;
      }
      const tool = /^\/api\/tools\/([a-z_]{1,64})$/.exec(url.pathname);
      if (tool) return callTool(tool[1]!, req, res);
      sendJson(res, 404, refusal("NOT_FOUND", `Nothing to post at ${url.pathname}.`));
      return;
    }
    if (method !== "GET" && method !== "HEAD") {
      send(res, 405, "text/plain; charset=utf-8", "Method not allowed.\n", { Allow: "GET, HEAD, POST" });
      return;
    }
    if (url.pathname === "/api/live") return live.add(res);
    const read = reads[url.pathname];
    if (read) return sendJson(res, 200, { success: true, data: await read(url) });
    if (url.pathname.startsWith("/assets/")) {
      const asset = assets?.get(url.pathname.slice("/assets/".length));
      if (asset) return send(res, 200, asset.type, asset.body, { "Cache-Control": "no-cache" });
      return send(res, 404, "text/plain; charset=utf-8", "Not found.\n");
    }
    if (VIEW_PATH.test(url.pathname)) {
      if (source === "query") {
        // The token moves into a cookie and out of the address bar (and out of history).
        url.searchParams.delete("token");
        res.writeHead(303, {
          ...SECURITY_HEADERS,
          "Set-Cookie": `${cookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`,
          Location: `${url.pathname}${url.search}`,
          "Cache-Control": "no-store",
        });
        res.end();
        return;
      }
      return send(res, 200, "text/html; charset=utf-8", assets ? SHELL : NOT_BUILT);
    }
    if (url.pathname.startsWith("/api/"))
      return sendJson(res, 404, refusal("NOT_FOUND", `No such read: ${url.pathname}.`));
    send(res, 404, "text/plain; charset=utf-8", "Not found.\n");
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpRefusal) sendJson(res, error.status, refusal(error.code, error.message));
      else {
        const envelope = failure(error);
        const status = error instanceof ArbeitError ? 400 : 500;
        sendJson(res, status, envelope);
      }
    });
  });
  // A page's event stream stays open: the server must not time it out.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(options.host, port);
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${shown}:${port}/?token=${token}`,
    server,
    close: async () => {
      live.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
