import { readSync } from "node:fs";
import { ArbeitError } from "../domain/errors.js";

/**
 * Standard input, read whole but never without bound: a runaway producer (or a hostile one) gets
 * INPUT_TOO_LARGE instead of exhausting memory or Node's string limit.
 */
export const MAX_STDIN_BYTES = 64 * 1024 * 1024;

export function inputTooLarge(what: string, limit: number): ArbeitError {
  return new ArbeitError("INPUT_TOO_LARGE", `${what} is over ${limit / (1024 * 1024)} MiB; nothing was read.`, {
    details: { limit_bytes: limit },
  });
}

/** Reads fd 0 to its end, synchronously; over `limit` bytes it stops and throws INPUT_TOO_LARGE. */
export function readStdinSync(limit = MAX_STDIN_BYTES, what = "Standard input"): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  let total = 0;
  for (;;) {
    let bytes: number;
    try {
      bytes = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A non-blocking pipe with nothing in it yet: wait a moment for the writer.
      if (code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        continue;
      }
      if (code === "EOF") break;
      throw error;
    }
    if (bytes === 0) break;
    total += bytes;
    if (total > limit) throw inputTooLarge(what, limit);
    chunks.push(Buffer.from(buffer.subarray(0, bytes)));
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw new ArbeitError("INVALID_ARGUMENT", `${what} is not valid UTF-8; nothing was read.`, {
      suggestions: ["Send UTF-8 text: JSON is UTF-8 by definition."],
    });
  }
}

/** Decoding that refuses invalid bytes, instead of turning them into U+FFFD unseen. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });
