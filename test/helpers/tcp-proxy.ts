import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 that forwards every connection to a target (Postgres, `arbeit serve`),
 * counts round trips, and can stand in for a slow network by delaying what it passes on. Used by
 * the round-trip budget test (test/store/round-trips.test.ts) and `npm run bench -- --network`.
 * Whoever starts it stops it (`close`).
 *
 * What it counts, per connection:
 * - **a connection** is one round trip of its own: the TCP handshake (SYN, SYN-ACK), which a
 *   real network charges before the client may send anything;
 * - **an exchange** is a burst of bytes from the client that the server answers: everything the
 *   client sends until an answer has reached it is one burst, however many writes or TCP
 *   segments it took, and the exchange is counted when the server's answer starts. What a client
 *   sends without waiting (pipelined statements, writes sent with a COMMIT) joins the burst it
 *   follows as long as no answer has been passed back to it yet: a client that did not wait made
 *   no round trip. With a delay set this is exact whatever the machine's load, since an answer
 *   reaches the client only after the delay; with none, a pipelining client's bursts may be split
 *   by how fast the server answers. Bytes the client sends that get no answer (Postgres's
 *   Terminate as a client hangs up) are not a round trip; bytes the server sends unasked are not
 *   either.
 * Round trips = connections + exchanges. A Postgres connection without TLS, with trust or a
 * cached password, costs 2: the handshake and the startup exchange; an HTTP request on a fresh
 * connection costs 2: the handshake and the request.
 *
 * The delay: `roundTripMs` is split evenly, half on each direction (a 10 ms round trip holds
 * every chunk 5 ms on its way to the server and 5 ms on its way back), in order. A new
 * connection's first bytes are also held one full round trip, the handshake's price, since the
 * client's connect() to the proxy itself returns at once.
 */
export interface TcpProxy {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** Where connections go; may be set after the proxy listens (before any connection). */
  target: { host: string; port: number } | undefined;
  /** The added round-trip time in ms (0: none); may change between calls. */
  roundTripMs: number;
  /** Totals since the start or the last reset. */
  counts(): RoundTripCounts;
  reset(): void;
  /** Ends every connection and stops listening. */
  close(): Promise<void>;
}

export interface RoundTripCounts {
  connections: number;
  exchanges: number;
  /** connections + exchanges */
  roundTrips: number;
  /** Bytes client to server, and back. */
  bytesUp: number;
  bytesDown: number;
}

/** Passes chunks from one socket to another after a fixed delay, in the order they came. */
class DelayedPipe {
  private readonly queue: Array<{ due: number; chunk: Buffer }> = [];
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly to: Socket,
    private readonly delayMs: () => number,
    /** Told each time bytes are passed on. */
    private readonly passed: () => void = () => {},
  ) {}

  private write(chunk: Buffer): void {
    this.to.write(chunk);
    this.passed();
  }

  push(chunk: Buffer, extraMs = 0): void {
    if (this.ended) return;
    const delay = this.delayMs() + extraMs;
    if (delay <= 0 && this.queue.length === 0) {
      this.write(chunk);
      return;
    }
    this.queue.push({ due: performance.now() + delay, chunk });
    this.schedule();
  }

  /** Ends the destination once everything queued has gone. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.queue.length === 0) this.to.end();
  }

  destroy(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.queue.length === 0) return;
    const wait = Math.max(0, this.queue[0]!.due - performance.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = performance.now();
      // Within 0.5 ms counts as due: timers fire late rather than early, never sooner.
      while (this.queue.length > 0 && this.queue[0]!.due <= now + 0.5) this.write(this.queue.shift()!.chunk);
      if (this.queue.length > 0) this.schedule();
      else if (this.ended) this.to.end();
    }, wait);
  }
}

export async function startTcpProxy(
  options: { target?: { host: string; port: number }; roundTripMs?: number } = {},
): Promise<TcpProxy> {
  const zero = (): RoundTripCounts => ({ connections: 0, exchanges: 0, roundTrips: 0, bytesUp: 0, bytesDown: 0 });
  let totals = zero();
  const sockets = new Set<Socket>();
  const proxy: TcpProxy = {
    port: 0,
    target: options.target,
    roundTripMs: options.roundTripMs ?? 0,
    counts: () => ({ ...totals, roundTrips: totals.connections + totals.exchanges }),
    reset: () => {
      totals = zero();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const oneWay = () => proxy.roundTripMs / 2;

  const server = createServer({ noDelay: true }, (client) => {
    const target = proxy.target;
    if (!target) {
      client.destroy();
      return;
    }
    totals.connections++;
    const upstream = connect({ host: target.host, port: target.port, noDelay: true });
    sockets.add(client);
    sockets.add(upstream);
    // Whether an answer has reached the client since its current burst began: what it sends
    // before that, it sent without waiting, and it joins that burst.
    let answered = true;
    // A burst the client began after an answer reached it, not yet answered itself.
    let waiting = false;
    const up = new DelayedPipe(upstream, oneWay);
    const down = new DelayedPipe(client, oneWay, () => {
      answered = true;
    });
    let first = true;
    client.on("data", (chunk: Buffer) => {
      totals.bytesUp += chunk.length;
      if (answered) {
        answered = false;
        waiting = true;
      }
      // The handshake's round trip, charged before the client's first bytes may leave.
      up.push(chunk, first ? proxy.roundTripMs : 0);
      first = false;
    });
    upstream.on("data", (chunk: Buffer) => {
      totals.bytesDown += chunk.length;
      // The exchange is counted when its answer starts: a burst nobody answers is no round trip.
      if (waiting) totals.exchanges++;
      waiting = false;
      down.push(chunk);
    });
    // A side that closes ends the other once what is queued for it has gone; an error ends both.
    const kill = () => {
      up.destroy();
      down.destroy();
      client.destroy();
      upstream.destroy();
    };
    client.on("end", () => up.end());
    upstream.on("end", () => down.end());
    client.on("close", () => {
      sockets.delete(client);
      up.end();
    });
    upstream.on("close", () => {
      sockets.delete(upstream);
      down.end();
    });
    client.on("error", kill);
    upstream.on("error", kill);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  proxy.port = (server.address() as { port: number }).port;
  return proxy;
}
