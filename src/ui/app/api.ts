/** Talking to the dashboard's server: reads (GET /api/...) and tool calls (POST /api/tools/<name>). */
import type { Envelope } from "../contract.js";
import { authorization, tokenRefused } from "./token.js";

/** A failed call, as the person sees it: the tool's code and message. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly suggestions: string[] = [],
  ) {
    super(message);
  }
}

async function envelopeOf<T>(response: Response): Promise<Envelope<T>> {
  // The token the page holds no longer works: the page asks for one again.
  if (response.status === 401) tokenRefused();
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`HTTP_${response.status}`, `The server answered ${response.status} ${response.statusText}.`);
  }
  if (body && typeof body === "object" && "success" in body) return body as Envelope<T>;
  if (!response.ok) throw new ApiError(`HTTP_${response.status}`, `The server answered ${response.status}.`);
  return { success: true, data: body as T };
}

function unwrap<T>(envelope: Envelope<T>): T {
  if (envelope.success) return envelope.data;
  const error = envelope.error;
  throw new ApiError(error.code, error.message, error.suggestions ?? []);
}

/**
 * The seq a view's data includes every change up to (the server reads it in the same
 * transaction), when the data says: a live notice at or below it needs no second load.
 */
export function seqOf(data: unknown): number | undefined {
  const seq = typeof data === "object" && data !== null ? (data as { seq?: unknown }).seq : undefined;
  return typeof seq === "number" ? seq : undefined;
}

/** GET a view's JSON. */
export async function getJson<T>(path: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { credentials: "omit", headers: { ...authorization(), Accept: "application/json" } });
  } catch {
    throw new ApiError("OFFLINE", "The dashboard's server cannot be reached.");
  }
  return unwrap(await envelopeOf<T>(response));
}

/** Calls a tool as the page's person; throws ApiError with the tool's code on failure. */
export async function callTool<T = unknown>(name: string, args: Record<string, unknown>): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/api/tools/${encodeURIComponent(name)}`, {
      method: "POST",
      credentials: "omit",
      headers: { ...authorization(), "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(args),
    });
  } catch {
    throw new ApiError("OFFLINE", "The dashboard's server cannot be reached; nothing was sent.");
  }
  return unwrap(await envelopeOf<T>(response));
}

export function errorText(error: unknown): { code: string; message: string } {
  if (error instanceof ApiError) return { code: error.code, message: error.message };
  return { code: "ERROR", message: error instanceof Error ? error.message : String(error) };
}
