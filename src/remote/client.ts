import type { Agent } from "node:http";
import { VERSION_HEADER } from "../domain/client-versions.js";
import type { Envelope } from "../domain/envelope.js";
import { ArbeitError } from "../domain/errors.js";
import { version } from "../service/release.js";
import { storedCa, tokenFor } from "./credentials.js";
import { certificateError, certificateProblem, trustedRoots } from "./trust.js";

/**
 * A service a request goes to: its URL, and the CA file that signed its certificate when the
 * project or a login names one (src/remote/trust.ts). A bare URL trusts Node's own roots.
 */
export interface Endpoint {
  url: string;
  ca?: string | undefined;
}

const endpoint = (service: string | Endpoint): Endpoint => (typeof service === "string" ? { url: service } : service);

/** The project's CA file first; else the one the user's login recorded for this service. */
function withCa(service: Endpoint, env: NodeJS.ProcessEnv): Endpoint {
  if (service.ca !== undefined || !service.url.startsWith("https:")) return service;
  return { url: service.url, ca: storedCa(service.url, env) };
}

/** The body of POST <url>/api/call (docs/team.md). */
export interface CallRequest {
  tool: string;
  args: unknown;
  session?: string | undefined;
  /** The sessions `session` was started from, nearest first (a sub-agent's conversation). */
  parents?: readonly string[] | undefined;
  /** The caller's default list (--list / ARBEIT_LIST): scopes reads, the list of what it creates. */
  list?: string | undefined;
}

/** The body of POST <url>/api/hook: one step of a host's hook, run on the service's store. */
export interface HookRequest {
  hook: string;
  session?: string | undefined;
  parents?: readonly string[] | undefined;
  /** The host's default list, as for a tool call. */
  list?: string | undefined;
  input: unknown;
  /**
   * A write step's stable id: the service runs a step with an id at most once, so a step sent
   * again (from the checkout's outbox, after an answer that never came) is not applied twice.
   */
  id?: string | undefined;
}

/** How long a tool call may wait for the service's answer. */
export const CALL_TIMEOUT_MS = 30_000;
/**
 * How long a hook may wait: a host waits for its hooks (Claude Code kills one after the 10 s
 * `arbeit setup claude` gives it), and a hook must never hold the person's session up for long.
 */
export const HOOK_TIMEOUT_MS = 4_000;
/**
 * How long the edit check before a file tool may wait, to connect and for the answer: the agent
 * waits for it before every edit, and while the service cannot be asked the check must still
 * answer within a second, process start included. A check is one small read, answered in
 * milliseconds by a working service (under 50 agents' load, within a few hundred).
 */
export const EDIT_CHECK_TIMEOUT_MS = 600;
/**
 * How long a connection may take to open. A service that is up opens one in a round trip; one
 * that is down or cut off by a hung network must not hold a hook for its whole answer timeout.
 */
export const CONNECT_TIMEOUT_MS = 1_500;

const loginHint = (url: string) =>
  `Run \`arbeit login ${url}\` with a token from the service's administrator, or set ARBEIT_TOKEN.`;

/** A request the client sends: its path on the service, its body, how long to wait for the answer. */
interface Request {
  path: "/api/call" | "/api/hook";
  body: unknown;
  timeoutMs: number;
}

/**
 * Sends one request to the service at `url` with the token for it, as one HTTP request, and
 * returns the service's envelope. A service that cannot be reached, or does not answer in time, is
 * STORE_UNAVAILABLE naming it; no token, or one it refuses, is UNAUTHORIZED saying how to log in.
 * Never throws.
 */
async function post(service: string | Endpoint, request: Request, env: NodeJS.ProcessEnv): Promise<Envelope> {
  return (await postFor(service, request, env)).envelope;
}

/**
 * The service's answer: its envelope, and the HTTP status it came with (undefined when no answer
 * came, or nothing was sent). A step the service refused as a request (400: it does not know the
 * step, or the body's shape) comes with a 4xx; a step's own failure with 200.
 */
export interface Reply {
  envelope: Envelope;
  status: number | undefined;
}

async function postFor(service: string | Endpoint, request: Request, env: NodeJS.ProcessEnv): Promise<Reply> {
  const url = endpoint(service).url;
  try {
    const token = tokenFor(url, env);
    if (token === undefined)
      throw new ArbeitError("UNAUTHORIZED", `No token for the Arbeit service at ${url}; nothing was sent.`, {
        suggestions: [loginHint(url)],
      });
    return await sendRequest(withCa(endpoint(service), env), token, request, env);
  } catch (error) {
    // sendRequest() names an unreachable service itself; anything else thrown here is a bug.
    const known =
      error instanceof ArbeitError
        ? error
        : new ArbeitError(
            "INTERNAL_ERROR",
            `Unexpected failure: ${error instanceof Error ? error.message : String(error)}`,
          );
    return { envelope: { success: false, error: known.toBody() }, status: undefined };
  }
}

/** One tool call sent to the service at `url`: its envelope (see post). */
export function postCall(
  url: string | Endpoint,
  call: CallRequest,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = CALL_TIMEOUT_MS,
): Promise<Envelope> {
  return post(url, { path: "/api/call", body: call, timeoutMs }, env);
}

/** One hook step sent to the service at `url`: its envelope, whose data is the step's answer, and its HTTP status. */
export function postHook(
  url: string | Endpoint,
  hook: HookRequest,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = HOOK_TIMEOUT_MS,
): Promise<Reply> {
  return postFor(url, { path: "/api/hook", body: hook, timeoutMs }, env);
}

/** Sends a tool call with `token`; the envelope the service answered. Throws an ArbeitError when there is none. */
export async function send(
  service: string | Endpoint,
  token: string,
  call: CallRequest,
  timeoutMs = CALL_TIMEOUT_MS,
): Promise<Envelope> {
  return (await sendRequest(endpoint(service), token, { path: "/api/call", body: call, timeoutMs }, process.env))
    .envelope;
}

async function sendRequest(service: Endpoint, token: string, request: Request, env: NodeJS.ProcessEnv): Promise<Reply> {
  const url = service.url;
  let answer: { status: number; text: string };
  try {
    const tls = await tlsOptions(service, env);
    answer = await exchange(
      new URL(`${url}${request.path}`),
      token,
      JSON.stringify(request.body),
      request.timeoutMs,
      tls,
    );
  } catch (error) {
    if (error instanceof ArbeitError) throw error;
    throw unreachable(service, error, request.timeoutMs);
  }
  let envelope: Envelope | undefined;
  try {
    const parsed = JSON.parse(answer.text) as Envelope;
    if (typeof parsed?.success === "boolean") envelope = parsed;
  } catch {}
  if (answer.status === 401)
    throw new ArbeitError("UNAUTHORIZED", `The Arbeit service at ${url} refused the token; nothing was done.`, {
      suggestions: [loginHint(url)],
    });
  if (envelope === undefined)
    throw new ArbeitError(
      "STORE_UNAVAILABLE",
      `${url} answered HTTP ${answer.status} without an Arbeit envelope; is it an Arbeit service?`,
      {
        suggestions: ["Check the URL (`arbeit status` shows it) and that `arbeit serve` runs there."],
        details: { path: url, status: answer.status },
      },
    );
  return { envelope, status: answer.status };
}

/** One keep-alive agent per scheme and CA file: `arbeit mcp` sends many calls; an idle connection never holds the process open. */
const agents = new Map<string, Agent>();

/** What an HTTPS request to `service` trusts: Node's defaults, or those and the service's CA file. */
interface Tls {
  key: string;
  ca?: string[] | undefined;
}

/** The TLS options for `service`; the CA file is read once per process. */
export async function tlsOptions(service: Endpoint, env: NodeJS.ProcessEnv = process.env): Promise<Tls> {
  if (service.ca === undefined || !service.url.startsWith("https:")) return { key: "" };
  return { key: service.ca, ca: await trustedRoots(service.ca, "named for the service", env) };
}

/**
 * POSTs `body` (GETs without one) and reads the whole answer, within `timeoutMs` (a hung service must not hang the
 * caller). node:http, not fetch: loading fetch costs a fresh process tens of milliseconds, more
 * than the call. HTTPS trusts Node's CAs and NODE_EXTRA_CA_CERTS, and the service's CA file (`tls`).
 * Every request names this client's release, by which the service serves or refuses it
 * (docs/team.md#versions); the answer's names the service's.
 */
async function exchange(
  target: URL,
  token: string | undefined,
  body: string | undefined,
  timeoutMs: number,
  tls: Tls = { key: "" },
) {
  const https = target.protocol === "https:";
  const http = https ? await import("node:https") : await import("node:http");
  const agentKey = `${target.protocol}\0${tls.key}`;
  let agent = agents.get(agentKey);
  if (!agent) {
    agent = new http.Agent({ keepAlive: true, ...(tls.ca ? { ca: tls.ca } : {}) });
    agents.set(agentKey, agent);
  }
  return new Promise<ServiceAnswer>((resolve, reject) => {
    let connecting: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      clearTimeout(connecting);
      const error = new Error(`No answer within ${timeoutMs} ms.`);
      error.name = "TimeoutError";
      reject(error);
      req.destroy(error);
    }, timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      clearTimeout(connecting);
      reject(error);
    };
    const req = http.request(
      target,
      {
        method: body === undefined ? "GET" : "POST",
        agent,
        headers: {
          ...(body === undefined
            ? {}
            : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }),
          ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
          [VERSION_HEADER]: version(),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", fail);
        res.on("aborted", () => fail(new Error("The connection closed before the whole answer arrived.")));
        res.on("end", () => {
          clearTimeout(timer);
          const release = res.headers[VERSION_HEADER.toLowerCase()];
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString("utf8"),
            version: typeof release === "string" ? release : undefined,
          });
        });
      },
    );
    req.on("error", fail);
    // A connection still opening after CONNECT_TIMEOUT_MS: nothing was sent, the service is away.
    req.on("socket", (socket) => {
      if (!socket.connecting) return;
      connecting = setTimeout(
        () => {
          const error = new Error(`No connection within ${CONNECT_TIMEOUT_MS} ms.`);
          error.name = "ConnectTimeoutError";
          fail(error);
          req.destroy(error);
        },
        Math.min(CONNECT_TIMEOUT_MS, timeoutMs),
      );
      socket.once("connect", () => clearTimeout(connecting));
      socket.once("close", () => clearTimeout(connecting));
    });
    req.end(body ?? undefined);
  });
}

/** What the service answered a request: its HTTP status, its body, and its release (Arbeit-Version). */
export interface ServiceAnswer {
  status: number;
  text: string;
  /** Undefined from a service older than the exchange of versions. */
  version: string | undefined;
}

/**
 * GET <url><path>, with `token` when one is given (GET /healthz needs none, GET /api/status does):
 * the status, body and release the service answered. Throws the ArbeitError that names why there
 * is no answer, a certificate it does not trust included.
 */
export async function getFromService(
  service: Endpoint,
  path: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
  token?: string,
): Promise<ServiceAnswer> {
  let trusted = service;
  try {
    trusted = withCa(service, env);
    const tls = await tlsOptions(trusted, env);
    return await exchange(new URL(`${service.url}${path}`), token, undefined, timeoutMs, tls);
  } catch (error) {
    if (error instanceof ArbeitError) throw error;
    throw unreachable(trusted, error, timeoutMs);
  }
}

function unreachable(service: Endpoint, error: unknown, timeoutMs: number): ArbeitError {
  const url = service.url;
  const problem = certificateProblem(error);
  if (problem) return certificateError(url, problem, (error as { code: string }).code, service.ca);
  if ((error as { name?: unknown } | null)?.name === "TimeoutError")
    return new ArbeitError(
      "STORE_UNAVAILABLE",
      `The Arbeit service at ${url} did not answer within ${timeoutMs / 1000} s; whether the call took effect is unknown.`,
      {
        suggestions: ["Check that `arbeit serve` runs there and is not stuck (its log, GET /healthz), then retry."],
        details: { path: url, cause: "service_timeout" },
      },
    );
  if ((error as { name?: unknown } | null)?.name === "ConnectTimeoutError")
    return new ArbeitError(
      "STORE_UNAVAILABLE",
      `The Arbeit service at ${url} could not be reached (no connection within ${CONNECT_TIMEOUT_MS / 1000} s); nothing was sent.`,
      {
        suggestions: ["Check that `arbeit serve` runs there and the network reaches it, then retry."],
        details: { path: url, cause: "service_unreachable" },
      },
    );
  const why = (error as { code?: unknown } | null)?.code ?? (error instanceof Error ? error.message : String(error));
  return new ArbeitError("STORE_UNAVAILABLE", `The Arbeit service at ${url} could not be reached (${why}).`, {
    suggestions: ["Check that `arbeit serve` runs there and the network reaches it, then retry."],
    details: { path: url, cause: "service_unreachable" },
  });
}
