import { STATUS_CODES } from "node:http";
import { SECURITY_HEADERS } from "../ui/server/security.js";

/**
 * Refusals of a request at the HTTP level (docs/dashboard.md#security, docs/team.md), answered in
 * the envelope every tool uses: `{success: false, error: {code, message}}`. Never a stack trace.
 */
export type RefusalCode =
  | "UNAUTHORIZED"
  | "FORBIDDEN_HOST"
  | "FORBIDDEN_ORIGIN"
  | "READ_ONLY"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "INVALID_ARGUMENT"
  | "FIELD_TOO_LARGE";

export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: RefusalCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get body(): string {
    return JSON.stringify({ success: false, error: { code: this.code, message: this.message } });
  }
}

export const malformed = (message: string) => new HttpRefusal(400, "INVALID_ARGUMENT", `Malformed request: ${message}`);

export const methodRefused = (allow: string) =>
  new HttpRefusal(405, "METHOD_NOT_ALLOWED", `This server answers only ${allow}.`, { Allow: allow });

/**
 * A refusal written straight to a socket, for requests Node's parser rejects before any handler
 * runs (or a CONNECT, which has none). The connection is closed after it: what follows a
 * malformed request cannot be trusted to be a request.
 */
export function rawRefusal(refusal: HttpRefusal): string {
  const body = refusal.body;
  const headers = {
    ...SECURITY_HEADERS,
    ...refusal.headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(body)),
    "Cache-Control": "no-store",
    Connection: "close",
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** What Node's HTTP parser found wrong, as the refusal to answer; `allow`: the methods the server answers. */
export function parserRefusal(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, allow: string): HttpRefusal {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new HttpRefusal(431, "FIELD_TOO_LARGE", "The request's headers (its URL included) are too large.");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new HttpRefusal(408, "INVALID_ARGUMENT", "The request did not arrive in time.");
    case "HPE_INVALID_METHOD":
      // A method word this server does not know is a method refused; other bytes (a TLS
      // handshake sent to plain HTTP, say) are no request at all.
      if (/^[A-Z]{1,20} /.test(error.rawPacket?.toString("latin1") ?? "")) return methodRefused(allow);
      return malformed("it is not valid HTTP/1.1.");
    default:
      return malformed("it is not valid HTTP/1.1.");
  }
}
