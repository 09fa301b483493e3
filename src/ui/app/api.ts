/** Talking to the dashboard's server: reads (GET /api/...) and tool calls (POST /api/tools/<name>). */
import type { Envelope } from "../contract.js";

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

/** The store's newest event when the server began a read (X-Arbeit-Seq), by the data it answered. */
const SEQ_OF = new WeakMap<object, number>();

/**
 * The seq a read's data is at least as new as, when known: a live change at or below it is
 * already in the data, so the view need not load again.
 */
export function seqOf(data: unknown): number | undefined {
  return typeof data === "object" && data !== null ? SEQ_OF.get(data) : undefined;
}

/** Records that `data` includes the store's state up to `seq` (data built from several reads). */
export function rememberSeq(data: object, seq: number): void {
  SEQ_OF.set(data, seq);
}

/** GET a view's JSON. */
export async function getJson<T>(path: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch {
    throw new ApiError("OFFLINE", "The dashboard's server cannot be reached.");
  }
  const data = unwrap(await envelopeOf<T>(response));
  const seq = Number(response.headers.get("X-Arbeit-Seq") ?? Number.NaN);
  if (Number.isInteger(seq) && typeof data === "object" && data !== null) SEQ_OF.set(data, seq);
  return data;
}

/** Calls a tool as the page's person; throws ApiError with the tool's code on failure. */
export async function callTool<T = unknown>(name: string, args: Record<string, unknown>): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/api/tools/${encodeURIComponent(name)}`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
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
