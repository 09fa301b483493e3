import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Server as TlsServer } from "node:https";
import { SECURITY_HEADERS } from "../ui/server/security.js";
import { HttpRefusal, malformed, methodRefused, parserRefusal, rawRefusal } from "./refusals.js";

/** How long a request may take to arrive, headers and body, unless a server says otherwise. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Answers `refusal` as a JSON envelope with the security headers. */
export function sendRefusal(res: ServerResponse, refusal: HttpRefusal): void {
  res.writeHead(refusal.status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    ...refusal.headers,
  });
  res.end(refusal.body);
}

/**
 * The server options that bound how long a request may take to arrive. A request whose headers
 * or body never finish would hold its connection for good; a response that streams (an event
 * stream, an MCP stream) is not cut, since its request is complete once its body is in.
 */
export function requestTimeouts(requestTimeout = REQUEST_TIMEOUT_MS) {
  return {
    // Without a Host header the handler refuses it in its own words, not Node's.
    requireHostHeader: false,
    requestTimeout,
    headersTimeout: requestTimeout,
    connectionsCheckingInterval: Math.min(requestTimeout / 2, 30_000),
  };
}

/**
 * Answers the requests that never reach a server's handler with a refusal instead of Node's bare
 * answers or a dropped connection: what the parser cannot read (400, 408, 431, 405 for an
 * unknown method), an Expect other than 100-continue (417) and CONNECT (405). `allow` names the
 * methods the server answers.
 */
export function guardEdges(server: Server | TlsServer, allow: string): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    const busy = (socket as { _httpMessage?: ServerResponse })._httpMessage?.headersSent;
    if (error.code === "ECONNRESET" || !socket.writable || busy) {
      socket.destroy();
      return;
    }
    socket.end(rawRefusal(parserRefusal(error, allow)));
  });
  server.on("checkExpectation", (_req, res: ServerResponse) =>
    sendRefusal(res, new HttpRefusal(417, "INVALID_ARGUMENT", "This server meets no Expect but 100-continue.")),
  );
  // CONNECT asks for a tunnel, which these servers never open (Node would drop it unanswered).
  server.on("connect", (_req, socket) => {
    socket.end(rawRefusal(methodRefused(allow)));
  });
}

/**
 * The request's body as JSON (an empty body is `{}`). Refused: no JSON content type (415, a plain
 * HTML form cannot send one: one more wall against cross-site posts), over `limit` bytes
 * (`tooLarge`, announced or not; the rest is not read), bytes that are not UTF-8 or not JSON (400).
 */
export async function readJsonBody(req: IncomingMessage, limit: number, tooLarge: () => Error): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json")
    throw new HttpRefusal(415, "INVALID_ARGUMENT", "Send the body as JSON (Content-Type: application/json).");
  if (Number(req.headers["content-length"] ?? 0) > limit) throw tooLarge();
  // Stops reading at the limit rather than iterating on: leaving a for-await destroys the socket,
  // and the refusal could not be sent.
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        req.off("data", onData);
        req.pause();
        reject(tooLarge());
      }
    };
    req.on("data", onData);
    req.once("end", () => resolve(chunks));
    req.once("error", () => reject(malformed("the body ended early.")));
    // A connection closed mid-body (cut by the request timeout, say): nothing more will come.
    req.once("close", () => reject(malformed("the body ended early.")));
  });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    // Bytes that are not UTF-8 would be stored as U+FFFD, silently changing what was sent.
    throw malformed("the body is not UTF-8.");
  }
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpRefusal(400, "INVALID_ARGUMENT", "The request body is not valid JSON.");
  }
}
