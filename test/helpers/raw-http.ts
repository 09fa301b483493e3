import assert from "node:assert/strict";
import { connect } from "node:net";

/**
 * Requests a browser would never send, written byte for byte over a raw socket to a real server
 * (`arbeit ui`, `arbeit serve`), and the checks that each is refused in the refusal envelope.
 */

export interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
  json: any;
}

/**
 * Writes `text` to the server's port as it is and reads the answer until the server closes.
 * `hold`: the request is left unfinished (the socket stays open for writing).
 */
export function raw(server: { origin: string }, text: string | Buffer, hold = false): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const answer = Buffer.concat(chunks).toString("utf8");
      const split = answer.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = answer.slice(0, split).split("\r\n");
      const headers = new Map(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
      );
      let body = answer.slice(split + 4);
      // A chunked answer: the refusal is its one chunk.
      if (headers.get("transfer-encoding") === "chunked") body = body.split("\r\n")[1] ?? "";
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {}
      resolve({ status: Number(statusLine?.split(" ")[1]), headers, body, json });
    });
    socket.write(text);
    // Half-close: the server answers what it has, then closes (keep-alive would hold it open).
    if (!hold) socket.end();
  });
}

export function assertRefused(answer: RawAnswer, status: number, code: string) {
  assert.equal(answer.status, status, answer.body);
  assert.deepEqual(Object.keys(answer.json ?? {}).sort(), ["error", "success"], answer.body);
  assert.equal(answer.json.success, false);
  assert.equal(answer.json.error.code, code, answer.body);
  assert.doesNotMatch(answer.body, /\bat .*\.(?:js|ts):\d+|node:internal/, "no stack trace");
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/);
  assert.match(answer.headers.get("content-security-policy") ?? "", /default-src 'none'/);
}
