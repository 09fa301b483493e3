import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver for tests: a real HTTP server on 127.0.0.1 that keeps what it is sent. */

export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

/** A webhook receiver on 127.0.0.1 that answers each request as `answer` says (status, or hold it open). */
export async function receiver(answer: (index: number) => number | "hold" = () => 200) {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      const status = answer(received.length - 1);
      if (status === "hold") held.push(res);
      else res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    held,
    /** Waits (bounded) until `count` requests have arrived. */
    async until(count: number) {
      for (let i = 0; i < 400 && received.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(received.length >= count, `expected ${count} deliveries, got ${received.length}`);
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
