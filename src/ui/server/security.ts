import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { hostname, networkInterfaces } from "node:os";

/**
 * The dashboard's three locks. A random token on every request keeps out other local users and
 * any web page that guesses the port. The Host check defeats DNS rebinding (a foreign name made
 * to resolve to 127.0.0.1 still arrives with its own Host). The Origin check on writes refuses a
 * form or fetch posted from another site, even one that somehow holds the cookie.
 */

export const newToken = (): string => randomBytes(24).toString("base64url");

/** Cookies are shared by every port of a host, so each server names its own. */
export const cookieName = (port: number) => `arbeit_token_${port}`;

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export type TokenSource = "query" | "cookie" | "header";

/** Where a valid token came from, or undefined when the request carries none that matches. */
export function tokenSource(req: IncomingMessage, url: URL, token: string, port: number): TokenSource | undefined {
  const query = url.searchParams.get("token");
  if (query !== null && sameSecret(query, token)) return "query";
  const fromCookie = cookie(req, cookieName(port));
  if (fromCookie !== undefined && sameSecret(fromCookie, token)) return "cookie";
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ") && sameSecret(header.slice(7).trim(), token)) return "header";
  return undefined;
}

const bracketed = (address: string) => (address.includes(":") && !address.startsWith("[") ? `[${address}]` : address);

/**
 * The Host values this server answers to: its own address and port, under the loopback names.
 * Listening on every interface (0.0.0.0, ::), it answers to each of the machine's addresses and
 * to its host name.
 */
export function allowedHosts(host: string, port: number): Set<string> {
  const names = new Set([bracketed(host), "127.0.0.1", "localhost", "[::1]"]);
  if (host === "0.0.0.0" || host === "::") {
    names.add(hostname());
    for (const addresses of Object.values(networkInterfaces()))
      for (const { address } of addresses ?? []) names.add(bracketed(address));
  }
  return new Set([...names].map((name) => `${name}:${port}`.toLowerCase()));
}

export function hostAllowed(req: IncomingMessage, hosts: ReadonlySet<string>): boolean {
  const host = req.headers.host?.toLowerCase();
  return host !== undefined && hosts.has(host);
}

/**
 * A write is allowed from the server's own pages: a browser names them in Origin. A client that
 * sends no Origin at all (a script with the token) is not a browser page and may write.
 */
export function originAllowed(req: IncomingMessage, hosts: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    const parsed = new URL(origin);
    return parsed.protocol === "http:" && hosts.has(parsed.host.toLowerCase());
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
