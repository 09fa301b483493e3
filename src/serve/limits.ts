import { setTimeout as sleep } from "node:timers/promises";
import { Refusal } from "./http.js";

/** The service's limits per token and per address (docs/team.md#limits). */
export interface Limits {
  /** Requests a second one token may make, on average. */
  rate: number;
  /** Requests one token may make at once after a quiet spell. */
  burst: number;
  /** MCP sessions one token may hold open. */
  sessions: number;
}

export const DEFAULT_LIMITS: Limits = { rate: 50, burst: 100, sessions: 20 };

/** Keys remembered at most; past it the memory starts again (every bucket full, every address forgiven). */
const REMEMBERED = 10_000;

export const rateLimited = (message: string, retryAfterSeconds: number) =>
  new Refusal(429, "RATE_LIMITED", message, undefined, {
    "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

/**
 * A token bucket per key: `burst` requests at once, refilled at `rate` a second. A request that
 * finds the bucket empty is refused, not queued, so a busy token never delays another.
 */
export class RequestRate {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one request for `key`, or throws the 429 refusal saying when the next one fits. */
  take(key: string): void {
    const now = this.now();
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= REMEMBERED) this.#buckets.clear();
      bucket = { tokens: this.burst, at: now };
      this.#buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    throw rateLimited(
      `This token made more than ${this.rate} requests a second (bursts of ${this.burst}); nothing was done.`,
      (1 - bucket.tokens) / this.rate,
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
