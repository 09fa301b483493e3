import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { hostname, networkInterfaces } from "node:os";

/**
 * The dashboard's three locks. A random token on every API request keeps out other local users
 * and any web page that guesses the port. The Host check defeats DNS rebinding (a foreign name
 * made to resolve to 127.0.0.1 still arrives with its own Host). The Origin check on writes
 * refuses a form or fetch posted from another site.
 *
 * The token travels only in the `Authorization` header, never in a cookie: a browser sends a
 * host's cookies to every port of that host, so any other local server the person visits would
 * receive it. The page keeps it in storage scoped to its own origin (docs/dashboard.md#security).
 */

/** A token for one run of `arbeit ui`; its prefix lets it be recognised wherever it is pasted (domain/secrets.ts). */
export const newToken = (): string => `arbui_${randomBytes(32).toString("base64url")}`;

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the request carries `Authorization: Bearer <token>`; nothing else counts. */
export function bearerMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  return header !== undefined && /^Bearer /i.test(header) && sameSecret(header.slice(7).trim(), token);
}

const bracketed = (address: string) => (address.includes(":") && !address.startsWith("[") ? `[${address}]` : address);

/** A browser leaves the scheme's default port out of Host and Origin. */
const DEFAULT_PORT = { http: 80, https: 443 } as const;

/**
 * The Host values this server answers to: its own address and port, under the loopback names
 * (on the scheme's default port, also without the port, as browsers send it). Listening on every
 * interface (0.0.0.0, ::), it answers to each of the machine's addresses and to its host name.
 */
export function allowedHosts(host: string, port: number, scheme: keyof typeof DEFAULT_PORT = "http"): Set<string> {
  const names = new Set([bracketed(host), "127.0.0.1", "localhost", "[::1]"]);
  if (host === "0.0.0.0" || host === "::") {
    names.add(hostname());
    for (const addresses of Object.values(networkInterfaces()))
      for (const { address } of addresses ?? []) names.add(bracketed(address));
  }
  const hosts = new Set<string>();
  for (const name of names) {
    hosts.add(`${name}:${port}`.toLowerCase());
    if (port === DEFAULT_PORT[scheme]) hosts.add(name.toLowerCase());
  }
  return hosts;
}

export function hostAllowed(req: IncomingMessage, hosts: ReadonlySet<string>): boolean {
  const host = req.headers.host?.toLowerCase();
  return host !== undefined && hosts.has(host);
}

/**
 * The origins (`scheme://host`) whose pages may write: each of `hosts` under each of `schemes`.
 * A server names its own hosts under the scheme it serves; a name a TLS-terminating proxy passes
 * on is reached by `https:` (or, behind a plain proxy, `http:`), which the server cannot tell.
 */
export function allowedOrigins(
  hosts: Iterable<string>,
  schemes: ReadonlyArray<keyof typeof DEFAULT_PORT>,
): Set<string> {
  const origins = new Set<string>();
  for (const host of hosts) for (const scheme of schemes) origins.add(`${scheme}://${host.toLowerCase()}`);
  return origins;
}

/**
 * A write is allowed from the server's own pages: a browser names them in Origin. A client that
 * sends no Origin at all (a script with the token) is not a browser page and may write.
 */
export function originAllowed(req: IncomingMessage, origins: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    const parsed = new URL(origin);
    return origins.has(`${parsed.protocol}//${parsed.host.toLowerCase()}`);
  } catch {
    return false;
  }
}

/** Headers every answer carries: the page may load only from this server and never be framed. */
export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Resource-Policy": "same-origin",
};
