import { jsonLogLine, logField } from "../http/log-field.js";

/** How `arbeit serve` writes its request log: text for people, JSON for log collectors. */
export type LogFormat = "text" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

/** One answered request, as the log tells it. */
export interface LoggedRequest {
  time: string;
  /** The address the request came from (a proxy's, behind one). */
  client: string;
  /** The name the token acts as: "-" before a token was accepted. */
  who: string;
  /** The token's own name (never its secret); null before a token was accepted. */
  token: string | null;
  method: string;
  /** The request target as sent: the path and any query. */
  target: string;
  /** The tool, hook step or MCP method: "-" for none. */
  tool: string;
  status: number;
  /** "ok", an error code, or "" when there is nothing to say. */
  outcome: string;
  seconds: number;
}

/**
 * The line for one request. Text: the time, who, method, path, tool, status with the outcome, the
 * duration and the client's address, each client-chosen field escaped (src/http/log-field.ts).
 * JSON: one object with the same facts under fixed keys.
 */
export function requestLine(format: LogFormat, entry: LoggedRequest): string {
  const ms = entry.seconds * 1000;
  if (format === "json")
    return jsonLogLine({
      time: entry.time,
      client: entry.client,
      token: entry.token,
      acts_as: entry.who === "-" ? null : entry.who,
      method: entry.method,
      path: entry.target,
      tool: entry.tool === "-" ? null : entry.tool,
      status: entry.status,
      outcome: entry.outcome === "" ? null : entry.outcome,
      duration_ms: Math.round(ms * 10) / 10,
    });
  const outcome = entry.outcome === "" ? "" : ` ${entry.outcome}`;
  const fields = [entry.who, entry.method, entry.target, entry.tool].map(logField).join(" ");
  return `${entry.time} ${fields} ${entry.status}${outcome} ${ms.toFixed(1)}ms ${logField(entry.client)}`;
}
