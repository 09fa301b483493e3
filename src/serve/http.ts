import type { IncomingMessage, ServerResponse } from "node:http";
import { ArbeitError, type ErrorCode } from "../domain/errors.js";
import type { Envelope } from "../tools/envelope.js";

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
  ) {
    super(message);
    this.error = new ArbeitError(code, message, suggestions ? { suggestions } : {});
  }

  envelope(): Envelope<never> {
    return { success: false, error: this.error.toBody() };
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    ...headers,
  });
  res.end(JSON.stringify(value));
}

/** The request's body as JSON; over MAX_BODY_BYTES is 413, no JSON content type 415, bad JSON 400. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  // A plain HTML form cannot send a JSON body: one more wall against cross-site posts.
  if (!type.startsWith("application/json"))
    throw new Refusal(415, "INVALID_ARGUMENT", "Send the body as JSON (Content-Type: application/json).");
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new Refusal(400, "INVALID_ARGUMENT", "The request body is not valid JSON.");
  }
}

const tooLarge = () =>
  new Refusal(
    413,
    "INPUT_TOO_LARGE",
    `The request body is over ${MAX_BODY_BYTES / (1024 * 1024)} MiB; nothing was read.`,
  );
