import type { IncomingMessage, ServerResponse } from "node:http";
import { ArbeitError, type ErrorCode } from "../domain/errors.js";
import { readJsonBody } from "../http/edges.js";
import type { Envelope } from "../tools/envelope.js";
import { SECURITY_HEADERS } from "../ui/server/security.js";

/** The most a request body may hold: room for a full batch of the largest writes. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A request refused before any tool ran: its HTTP status and the envelope's error. */
export class Refusal extends Error {
  readonly error: ArbeitError;
  constructor(
    readonly status: number,
    code: ErrorCode,
    message: string,
    suggestions?: string[],
    /** Headers the answer carries (Retry-After, say). */
    readonly headers: Record<string, string> = {},
    details?: Record<string, unknown>,
  ) {
    super(message);
    this.error = new ArbeitError(code, message, {
      ...(suggestions ? { suggestions } : {}),
      ...(details ? { details } : {}),
    });
  }

  envelope(): Envelope<never> {
    return { success: false, error: this.error.toBody() };
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    ...headers,
  });
  res.end(JSON.stringify(value));
}

/** The request's body as JSON: over MAX_BODY_BYTES is 413, the other refusals are readJsonBody's. */
export const readJson = (req: IncomingMessage): Promise<unknown> => readJsonBody(req, MAX_BODY_BYTES, tooLarge);

const tooLarge = () =>
  new Refusal(
    413,
    "INPUT_TOO_LARGE",
    `The request body is over ${MAX_BODY_BYTES / (1024 * 1024)} MiB; nothing was read.`,
  );
