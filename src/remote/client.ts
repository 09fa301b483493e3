import type { Envelope } from "../domain/envelope.js";
import { ArbeitError } from "../domain/errors.js";
import { tokenFor } from "./credentials.js";

/** The body of POST <url>/api/call (docs/team.md). */
export interface CallRequest {
  tool: string;
  args: unknown;
  session?: string | undefined;
}

const loginHint = (url: string) =>
  `Run \`arbeit login ${url}\` with a token from the service's administrator, or set ARBEIT_TOKEN.`;

/**
 * Sends one tool call to the service at `url` as one HTTP request and returns its envelope. A
 * service that cannot be reached is STORE_UNAVAILABLE naming it; no token, or one it refuses,
 * is UNAUTHORIZED saying how to log in. Never throws.
 */
export async function postCall(
  url: string,
  call: CallRequest,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Envelope> {
  try {
    const token = tokenFor(url, env);
    if (token === undefined)
      throw new ArbeitError("UNAUTHORIZED", `No token for the Arbeit service at ${url}; nothing was sent.`, {
        suggestions: [loginHint(url)],
      });
    return await send(url, token, call);
  } catch (error) {
    // send() names an unreachable service itself; anything else thrown here is a bug.
    const known =
      error instanceof ArbeitError
        ? error
        : new ArbeitError(
            "INTERNAL_ERROR",
            `Unexpected failure: ${error instanceof Error ? error.message : String(error)}`,
          );
    return { success: false, error: known.toBody() };
  }
}

/** Sends with `token`; the envelope the service answered. Throws an ArbeitError when there is none. */
export async function send(url: string, token: string, call: CallRequest): Promise<Envelope> {
  let response: Response;
  try {
    response = await fetch(`${url}/api/call`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify(call),
    });
  } catch (error) {
    throw unreachable(url, error);
  }
  const text = await response.text().catch(() => "");
  let envelope: Envelope | undefined;
  try {
    const parsed = JSON.parse(text) as Envelope;
    if (typeof parsed?.success === "boolean") envelope = parsed;
  } catch {}
  if (response.status === 401)
    throw new ArbeitError("UNAUTHORIZED", `The Arbeit service at ${url} refused the token; nothing was done.`, {
      suggestions: [loginHint(url)],
    });
  if (envelope === undefined)
    throw new ArbeitError(
      "STORE_UNAVAILABLE",
      `${url} answered HTTP ${response.status} without an Arbeit envelope; is it an Arbeit service?`,
      {
        suggestions: ["Check the URL (`arbeit status` shows it) and that `arbeit serve` runs there."],
        details: { path: url, status: response.status },
      },
    );
  return envelope;
}

function unreachable(url: string, error: unknown): ArbeitError {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new ArbeitError("STORE_UNAVAILABLE", `The Arbeit service at ${url} could not be reached (${why}).`, {
    suggestions: ["Check that `arbeit serve` runs there and the network reaches it, then retry."],
    details: { path: url, cause: "service_unreachable" },
  });
}
