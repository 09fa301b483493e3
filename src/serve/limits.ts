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

/**
 * Failed tokens per client address: each one answers its 401 a little later than the one before
 * (100 ms, doubling, at most 5 s), so guessing tokens is slow; a success from the address starts
 * it over. The wait is a timer, never a blocked event loop: other clients are answered meanwhile.
 */
export class FailedTokens {
  readonly #failures = new Map<string, number>();

  /** Waits the delay `address`'s failures have earned, then counts one more. */
  async failed(address: string): Promise<void> {
    const failures = this.#failures.get(address) ?? 0;
    if (this.#failures.size >= REMEMBERED && failures === 0) this.#failures.clear();
    this.#failures.set(address, failures + 1);
    await sleep(Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(failures, 16)));
  }

  succeeded(address: string): void {
    this.#failures.delete(address);
  }
}
