import { ERROR_CODES } from "../domain/errors.js";
import { findTool } from "../tools/catalogue.js";
import { isHookStep } from "./hook-endpoint.js";

/**
 * What `GET /metrics` answers (docs/team.md#metrics), in Prometheus's text format. Every label
 * value comes from a fixed set (the catalogue's tools, the hook steps, MCP methods, error codes,
 * endpoints), never from a client's text as sent: a client cannot grow the number of series.
 */

/** The upper bounds of the latency histogram's buckets, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The MCP methods named as they are; any other is "other". */
const MCP_METHODS = new Set([
  "initialize",
  "notifications/initialized",
  "tools/list",
  "ping",
  "resources/list",
  "prompts/list",
  "notifications/cancelled",
]);
const CODES = new Set<string>(ERROR_CODES);

/** The endpoint a request went to, as a label: one of a few, whatever path was sent. */
export function endpointOf(path: string): string {
  if (["/api/call", "/api/hook", "/mcp", "/healthz", "/metrics", "/api/status", "/api/live"].includes(path))
    return path;
  if (path.startsWith("/api/")) return "/api/*";
  return "other";
}

/** A tool, hook step or MCP method as a label; "other" for anything else a client named. */
const toolLabel = (tool: string) => (findTool(tool) || isHookStep(tool) || MCP_METHODS.has(tool) ? tool : "other");

/** The outcomes a hook step may name besides ok (src/remote/steps.ts): not errors. */
const STEP_OUTCOMES = new Set(["ok", "edit_refused"]);

/** An outcome as a label: "ok", a step's own outcome, an error code, or "other". */
const outcomeLabel = (outcome: string) => (STEP_OUTCOMES.has(outcome) || CODES.has(outcome) ? outcome : "other");

/** A label value in the exposition format: backslash, double quote and line feed escaped. */
const quoted = (value: string) => `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")}"`;

const labels = (pairs: Record<string, string>) =>
  `{${Object.entries(pairs)
    .map(([name, value]) => `${name}=${quoted(value)}`)
    .join(",")}}`;

/** One request as the metrics see it, once it is answered. */
export interface AnsweredRequest {
  path: string;
  status: number;
  /** The tool, hook step or MCP method it named ("-": none). */
  tool: string;
  /** "ok", the error code, or "" (nothing to say: a page, a stream). */
  outcome: string;
  seconds: number;
  /** A stream (an MCP GET, the dashboard's live events): open for as long as the client likes, so not timed. */
  stream: boolean;
}

/** What the metrics read when they are asked: the state of things now. */
export interface Gauges {
  mcpSessions: number;
  liveStreams: number;
  pool?: { max: number; total: number; idle: number; waiting: number } | undefined;
}

class Counter {
  readonly #values = new Map<string, number>();
  add(pairs: Record<string, string>, by = 1) {
    const key = labels(pairs);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }
  lines(name: string): string[] {
    return [...this.#values].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => `${name}${key} ${value}`);
  }
}

export class ServiceMetrics {
  readonly #requests = new Counter();
  readonly #calls = new Counter();
  readonly #errors = new Counter();
  readonly #deliveries = new Counter();
  /** Per endpoint: the count in each bucket (not cumulative), then the sum and the count. */
  readonly #latency = new Map<string, { buckets: number[]; sum: number; count: number }>();

  constructor(
    private readonly version: string,
    private readonly gauges: () => Gauges,
  ) {}

  answered(request: AnsweredRequest): void {
    const endpoint = endpointOf(request.path);
    this.#requests.add({ endpoint, status: String(request.status) });
    if (request.tool !== "-")
      this.#calls.add({ tool: toolLabel(request.tool), outcome: outcomeLabel(request.outcome || "ok") });
    if (CODES.has(request.outcome)) this.#errors.add({ code: request.outcome });
    if (request.stream) return;
    let timing = this.#latency.get(endpoint);
    if (!timing) {
      timing = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.#latency.set(endpoint, timing);
    }
    const bucket = BUCKETS.findIndex((bound) => request.seconds <= bound);
    if (bucket >= 0) timing.buckets[bucket]!++;
    timing.sum += request.seconds;
    timing.count++;
  }

  /** A webhook delivery ended: its receiver took it, or every try failed. */
  delivery(outcome: "delivered" | "failed"): void {
    this.#deliveries.add({ outcome });
  }

  render(): string {
    const now = this.gauges();
    const out: string[] = [];
    const family = (name: string, type: string, help: string, lines: string[]) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
    family("arbeit_build_info", "gauge", "The service's release.", [
      `arbeit_build_info${labels({ version: this.version })} 1`,
    ]);
    family(
      "arbeit_requests_total",
      "counter",
      "Requests answered, by endpoint and HTTP status.",
      this.#requests.lines("arbeit_requests_total"),
    );
    family(
      "arbeit_calls_total",
      "counter",
      "Tool calls, hook steps and MCP methods answered, by name and outcome (ok or the error code).",
      this.#calls.lines("arbeit_calls_total"),
    );
    family(
      "arbeit_errors_total",
      "counter",
      "Requests that ended in an error (a refusal or a tool's error), by code.",
      this.#errors.lines("arbeit_errors_total"),
    );
    const latency: string[] = [];
    for (const [endpoint, timing] of [...this.#latency].sort(([a], [b]) => a.localeCompare(b))) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += timing.buckets[i]!;
        latency.push(`arbeit_request_duration_seconds_bucket${labels({ endpoint, le: String(bound) })} ${cumulative}`);
      });
      latency.push(`arbeit_request_duration_seconds_bucket${labels({ endpoint, le: "+Inf" })} ${timing.count}`);
      latency.push(`arbeit_request_duration_seconds_sum${labels({ endpoint })} ${timing.sum}`);
      latency.push(`arbeit_request_duration_seconds_count${labels({ endpoint })} ${timing.count}`);
    }
    family(
      "arbeit_request_duration_seconds",
      "histogram",
      "How long requests took to answer, by endpoint (streams are not timed).",
      latency,
    );
    family("arbeit_mcp_sessions", "gauge", "MCP sessions open now.", [`arbeit_mcp_sessions ${now.mcpSessions}`]);
    family("arbeit_live_streams", "gauge", "Dashboard live event streams open now.", [
      `arbeit_live_streams ${now.liveStreams}`,
    ]);
    if (now.pool) {
      family("arbeit_db_pool_connections", "gauge", "Postgres connections in the pool, by state.", [
        `arbeit_db_pool_connections${labels({ state: "busy" })} ${now.pool.total - now.pool.idle}`,
        `arbeit_db_pool_connections${labels({ state: "idle" })} ${now.pool.idle}`,
      ]);
      family("arbeit_db_pool_max", "gauge", "The most Postgres connections the pool opens.", [
        `arbeit_db_pool_max ${now.pool.max}`,
      ]);
      family("arbeit_db_pool_waiting", "gauge", "Transactions waiting for a Postgres connection now.", [
        `arbeit_db_pool_waiting ${now.pool.waiting}`,
      ]);
    }
    family(
      "arbeit_webhook_deliveries_total",
      "counter",
      "Webhook deliveries this process made, by outcome (failed: every try failed).",
      this.#deliveries.lines("arbeit_webhook_deliveries_total"),
    );
    return `${out.join("\n")}\n`;
  }
}
