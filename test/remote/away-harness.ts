import { readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request } from "node:http";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { join } from "node:path";

/** A hung network: a TCP listener that accepts every connection and never answers. */
export interface HungListener {
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function hungListener(): Promise<HungListener> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * An HTTP proxy in front of a service that may change each request's JSON body on its way (to
 * stand in for a client newer than the service) or pass the request on and never answer (an
 * answer lost on the way back: the service did the work, the client never hears of it).
 */
export interface BodyProxy {
  url: string;
  mode: "rewrite" | "swallow";
  /** Bodies passed on, after rewriting. */
  readonly bodies: string[];
  close(): Promise<void>;
}

export async function bodyProxy(target: string, rewrite: (body: string) => string): Promise<BodyProxy> {
  const to = new URL(target);
  const bodies: string[] = [];
  const proxy: BodyProxy = {
    url: "",
    mode: "rewrite",
    bodies,
    close: async () => {},
  };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body =
        proxy.mode === "rewrite"
          ? rewrite(Buffer.concat(chunks).toString("utf8"))
          : Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      const headers = { ...req.headers, host: to.host, "content-length": String(Buffer.byteLength(body)) };
      const forward = request(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers },
        (answer) => {
          if (proxy.mode === "swallow") {
            answer.resume();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

/** The checkout's memory of an outage (src/remote/service-away.ts), read as a test sees it. */
export function awayState(checkout: string): any {
  try {
    return JSON.parse(readFileSync(join(checkout, ".arbeit", "service-away.json"), "utf8"));
  } catch {
    return {};
  }
}

/**
 * Moves the last failed try back `ms` milliseconds: the clock the checkout's memory runs on, so a
 * test need not wait out the window in which hooks do not try the network.
 */
export function ageAway(checkout: string, ms: number): void {
  const state = awayState(checkout);
  if (!state.away) return;
  state.away.last_tried = new Date(Date.parse(state.away.last_tried) - ms).toISOString();
  writeFileSync(join(checkout, ".arbeit", "service-away.json"), JSON.stringify(state));
}

/** The entries of one of the checkout's outbox files. */
export function outboxLines(checkout: string, file = "outbox.jsonl"): any[] {
  try {
    return readFileSync(join(checkout, ".arbeit", file), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}
