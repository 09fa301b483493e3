import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpRefusal } from "../../http/refusals.js";
import { readNotices } from "../../notify/notices.js";
import { readActivity } from "../../service/activity.js";
import type { ArbeitService } from "../../service/arbeit-service.js";
import { readHome } from "../../service/home.js";
import { newestSeq, readAgents, readInbox, readOverview } from "../../service/overview.js";
import { findTool } from "../../tools/catalogue.js";
import type { ToolDef } from "../../tools/define.js";
import type { Envelope } from "../../tools/envelope.js";
import type { Me } from "../contract.js";
import { loadAssets, NOT_BUILT, shell } from "./assets.js";
import { projectRemoteReader } from "./git-remote.js";
import { LiveFeed } from "./live.js";
import { SECURITY_HEADERS } from "./security.js";
import { readTaskPage } from "./task-page.js";

/**
 * The dashboard's routes: the page, the reads behind each view, live change notices, and every
 * edit as a call of the tool catalogue. `arbeit ui` and `arbeit serve` both answer with these;
 * each settles first who a request is (its own token check), then hands the request here.
 */

/** Who an /api/* request acts as, settled by the server that received it. */
export interface DashboardUser {
  /** The agent edits are made as: `human:<name>`. */
  agent: string;
  /** Whether the page should offer no edits (the server refuses them either way). */
  readOnly: boolean;
  /** Runs `tool` with `args` as this person, under the server's own rules; may throw an HTTP refusal. */
  call(tool: ToolDef, args: unknown): Promise<Envelope>;
  /** Called before this person's live event stream opens: may refuse it (a limit) or watch it. */
  streamOpening?(res: ServerResponse): void;
}

export interface DashboardRoutesOptions {
  service: ArbeitService;
  engine: Me["engine"];
  location: string;
  /** The page asks for a person's token at a sign-in form (`arbeit serve`) instead of taking it from its URL. */
  signIn: boolean;
  /** Reads a write's JSON body under the server's own size limit. */
  readBody(req: IncomingMessage): Promise<unknown>;
  /** How often the live feed looks for changes. */
  pollMs?: number | undefined;
}

/** Views the page draws; each has its own URL, and every one is answered with the same document. */
const VIEW_PATH = /^\/(?:|board|tree|graph|agents|activity|inbox|task\/[^/]+)$/;
/** A write: a tool of the catalogue by name. */
const TOOL_PATH = /^\/api\/tools\/([a-z_]{1,64})$/;

export function send(
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

/** The tool a dashboard write names (`POST /api/tools/<name>`), for a server's request log. */
export const toolOfPath = (path: string): string | undefined => TOOL_PATH.exec(path)?.[1];

export class DashboardRoutes {
  readonly live: LiveFeed;
  readonly #assets = loadAssets();
  readonly #shell: string;
  readonly #reads: Record<string, (url: URL, user: DashboardUser) => Promise<unknown>>;

  constructor(private readonly options: DashboardRoutesOptions) {
    const { service } = options;
    this.live = new LiveFeed(() => newestSeq(service.store), options.pollMs);
    this.#shell = this.#assets ? shell(options.signIn) : NOT_BUILT;
    const remote = projectRemoteReader(service.projectRoot);
    this.#reads = {
      "/api/me": async (_url, user) =>
        ({
          agent: user.agent,
          read_only: user.readOnly,
          engine: options.engine,
          location: options.location,
          seq: await newestSeq(service.store),
        }) satisfies Me,
      "/api/overview": (url) => readOverview(service.store, optionalText(url, "list"), optionalInt(url, "since")),
      "/api/agents": () => readAgents(service.store),
      "/api/inbox": () => readInbox(service.store),
      "/api/home": () => readHome(service.store),
      "/api/notices": (url) => readNotices(service.store, optionalInt(url, "after")),
      "/api/task": (url) => {
        const id = optionalText(url, "id");
        if (id === undefined)
          throw new HttpRefusal(400, "INVALID_ARGUMENT", "id must name a task: /api/task?id=tkt-….");
        return readTaskPage(service, id, remote);
      },
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
  }

  /**
   * Answers a request for the page or one of its assets and returns true; false for any other
   * request. The page and its assets hold no data: they load without a token, then ask /api/*.
   */
  page(method: string, url: URL, res: ServerResponse): boolean {
    if (method !== "GET" && method !== "HEAD") return false;
    if (url.pathname.startsWith("/assets/")) {
      const asset = this.#assets?.get(url.pathname.slice("/assets/".length));
      if (asset) send(res, 200, asset.type, asset.body, { "Cache-Control": "no-cache" });
      else send(res, 404, "text/plain; charset=utf-8", "Not found.\n");
      return true;
    }
    if (!VIEW_PATH.test(url.pathname)) return false;
    send(res, 200, "text/html; charset=utf-8", this.#shell);
    return true;
  }

  /** Answers an /api/* request of `user`: a read, the live stream, or a write through a tool. */
  async api(method: string, url: URL, req: IncomingMessage, res: ServerResponse, user: DashboardUser): Promise<void> {
    if (method === "POST") {
      const name = toolOfPath(url.pathname);
      if (name === undefined) throw new HttpRefusal(404, "NOT_FOUND", `Nothing to post at ${url.pathname}.`);
      const tool = findTool(name);
      if (!tool) throw new HttpRefusal(404, "NOT_FOUND", `There is no tool ${name}.`);
      const args = await this.options.readBody(req);
      sendJson(res, 200, await user.call(tool, args));
      return;
    }
    if (method !== "GET" && method !== "HEAD")
      throw new HttpRefusal(404, "NOT_FOUND", `Nothing to ${method} at ${url.pathname}.`);
    if (url.pathname === "/api/live") {
      if (method === "HEAD") return send(res, 200, "text/event-stream; charset=utf-8", "");
      user.streamOpening?.(res);
      return this.live.add(res);
    }
    const read = this.#reads[url.pathname];
    if (read) return sendJson(res, 200, { success: true, data: await read(url, user) });
    throw new HttpRefusal(404, "NOT_FOUND", `No such read: ${url.pathname}.`);
  }

  close(): void {
    this.live.close();
  }
}
