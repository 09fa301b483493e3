import { setTimeout as sleep } from "node:timers/promises";
import { Refusal } from "./http.js";

/** The service's limits per token and per address (docs/team.md#limits). */
export interface Limits {
  /** Calls a second one token may make, on average. */
  rate: number;
  /** Calls one token may make at once after a quiet spell. */
  burst: number;
  /** MCP sessions one token may hold open. */
  sessions: number;
}

export const DEFAULT_LIMITS: Limits = { rate: 50, burst: 100, sessions: 20 };

/**
 * Seconds an MCP session may sit idle before it is closed. A running client holds a stream open or
 * sends requests, so only a client that died without ending its session waits this long; an hour
 * spares a client that does not initialize again after a 404 (not every one does).
 */
export const DEFAULT_SESSION_IDLE_S = 3600;

/** Keys remembered at most; past it the memory starts again (every bucket full, every address forgiven). */
const REMEMBERED = 10_000;

export const rateLimited = (message: string, retryAfterSeconds: number) =>
  new Refusal(429, "RATE_LIMITED", message, undefined, {
    "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

/**
 * How many calls a tool call makes: each operation of arbeit_batch is a call of its own (a batch
 * may hold a hundred writes), any other tool is one.
 */
export function callsOf(tool: unknown, args: unknown): number {
  const operations = (args as { operations?: unknown } | null)?.operations;
  return tool === "arbeit_batch" && Array.isArray(operations) ? Math.max(1, operations.length) : 1;
}

/**
 * How many calls an MCP post makes: each message of a JSON-RPC batch counts, a tools/call as
 * callsOf its tool, any other message as one.
 */
export function mcpCalls(body: unknown): number {
  const messages = Array.isArray(body) ? body : [body];
  let calls = 0;
  for (const message of messages) {
    const { method, params } = (message ?? {}) as {
      method?: unknown;
      params?: { name?: unknown; arguments?: unknown };
    };
    calls += method === "tools/call" ? callsOf(params?.name, params?.arguments) : 1;
  }
  return Math.max(1, calls);
}

/**
 * A token bucket per key: `burst` calls at once, refilled at `rate` a second. Calls that find the
 * bucket short are refused, not queued, so a busy token never delays another. A request is
 * counted by the calls it makes (a JSON-RPC batch, arbeit_batch), all taken or none.
 */
export class RequestRate {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Takes the `calls` a request makes for `key`, or throws: 429 saying when they fit, or 413 when
   * they never can (more than the burst). A refused request takes nothing.
   */
  take(key: string, calls = 1): void {
    if (calls > this.burst)
      throw new Refusal(
        413,
        "INPUT_TOO_LARGE",
        `This request makes ${calls} calls, more than a token may make at once (${this.burst}); nothing was done.`,
        ["Send the calls in smaller batches, each within the burst, spread over time (docs/team.md#limits)."],
      );
    const now = this.now();
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= REMEMBERED) this.#buckets.clear();
      bucket = { tokens: this.burst, at: now };
      this.#buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
    bucket.at = now;
    if (bucket.tokens >= calls) {
      bucket.tokens -= calls;
      return;
    }
    throw rateLimited(
      `This token made more than ${this.rate} calls a second (bursts of ${this.burst}); nothing was done.`,
      (calls - bucket.tokens) / this.rate,
    );
  }
}

/** The first delay after a failed token, doubled with each further failure up to the cap. */
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 5_000;
/** The most wrong tokens of one address may wait in line; past it they are refused at once. */
const MAX_QUEUE_MS = 30_000;

/**
 * Failed tokens per client address: each one answers its 401 a little later than the one before
 * (100 ms, doubling, at most 5 s), and the waits of one address queue up, so guesses sent at once
 * take as long as guesses sent one by one. When an address's queue is over 30 s long, a further
 * guess is answered 429 at once instead of holding its connection. A valid token from the
 * address starts it over. The waits are timers, never a blocked event loop: other clients are
 * answered meanwhile.
 */
export class FailedTokens {
  readonly #addresses = new Map<string, { failures: number; until: number }>();
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Waits the delay `address`'s failures have earned, then lets its 401 go; or throws a 429. */
  async failed(address: string): Promise<void> {
    const now = this.now();
    let entry = this.#addresses.get(address);
    if (!entry) {
      if (this.#addresses.size >= REMEMBERED) this.#addresses.clear();
      entry = { failures: 0, until: now };
      this.#addresses.set(address, entry);
    }
    const start = Math.max(now, entry.until);
    if (start - now >= MAX_QUEUE_MS)
      throw rateLimited(
        "Too many wrong tokens from this address; nothing was done. Check the token you send.",
        (start - now) / 1000,
      );
    const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(entry.failures, 16));
    entry.failures += 1;
    entry.until = start + delay;
    await sleep(entry.until - now);
  }

  succeeded(address: string): void {
    this.#addresses.delete(address);
  }
}
