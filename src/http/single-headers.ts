import type { IncomingMessage } from "node:http";
import { malformed } from "./refusals.js";

/**
 * Headers a request is judged by: where it is addressed, who sends it, from which page, in which
 * session, in what form its body comes. Node keeps the first of some repeated headers and joins
 * others, so a request carrying two could be judged by one copy while something in front of the
 * server (a proxy, a cache) acts on the other; which copy counts is never guessed at.
 */
const SINGLE = new Set([
  "host",
  "authorization",
  "origin",
  "content-type",
  "content-length",
  "transfer-encoding",
  "mcp-session-id",
  "x-arbeit-session",
  "arbeit-version",
]);

/** Refuses (400) a request that carries one of the headers above more than once. */
export function refuseRepeatedHeaders(req: IncomingMessage): void {
  const seen = new Set<string>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    if (!SINGLE.has(name)) continue;
    if (seen.has(name)) throw malformed(`it carries the ${name} header more than once.`);
    seen.add(name);
  }
}
