import { UsageError } from "./usage-error.js";

/** Addresses only this machine can reach: listening on anything else lets others connect. */
export const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** The port a `--port` flag names (0: any free one), or `fallback` when it is not given. */
export function portFlag(value: string | undefined, fallback: number, usage: string): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535, not ${JSON.stringify(value)}.`, usage);
  return Number(value);
}
