import type { ServerResponse } from "node:http";

/**
 * Server-Sent Events for every open page. One poll of the store's newest event seq serves all
 * pages: it sees writes by any process, on any machine sharing a Postgres store, since every
 * write appends an event. A page told of a new seq reloads its view's data.
 */
export class LiveFeed {
  readonly #clients = new Set<ServerResponse>();
  readonly #newest: () => Promise<number>;
  readonly #everyMs: number;
  #seq = -1;
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(newest: () => Promise<number>, everyMs = 150) {
    this.#newest = newest;
    this.#everyMs = everyMs;
  }

  get clients(): number {
    return this.#clients.size;
  }

  async add(res: ServerResponse): Promise<void> {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
    });
    // The browser reconnects by itself after a second if the stream drops.
    res.write("retry: 1000\n\n");
    this.#clients.add(res);
    res.on("close", () => {
      this.#clients.delete(res);
      if (this.#clients.size === 0) this.#stop();
    });
    if (this.#seq < 0) this.#seq = await this.#newest();
    send(res, this.#seq);
    this.#start();
  }

  #start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#poll(), this.#everyMs);
    // A comment now and then keeps proxies and idle timers from closing a quiet stream.
    this.#heartbeat = setInterval(() => {
      for (const client of this.#clients) client.write(": still here\n\n");
    }, 15_000);
  }

  #stop(): void {
    clearInterval(this.#timer);
    clearInterval(this.#heartbeat);
    this.#timer = undefined;
    this.#heartbeat = undefined;
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const seq = await this.#newest();
      if (seq !== this.#seq) {
        this.#seq = seq;
        for (const client of this.#clients) send(client, seq);
      }
    } catch {
      // A busy or briefly unreachable store is tried again at the next tick.
    } finally {
      this.#polling = false;
    }
  }

  close(): void {
    this.#stop();
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }
}

function send(res: ServerResponse, seq: number): void {
  res.write(`event: change\ndata: ${JSON.stringify({ seq })}\n\n`);
}
