import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { ArbeitError } from "../domain/errors.js";

/**
 * Input the CLI reads whole (standard input, a batch file) is read in pieces and never without
 * bound: a runaway producer, a hostile one or a device that never ends (/dev/zero) gets
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
  return readWholeSync(0, limit, what);
}

/**
 * Reads the file at `path` to its end, with the bound of standard input. It is opened without
 * blocking, so a named pipe nobody writes to reads as empty instead of waiting forever for a
 * writer; a pipe with a writer is read as standard input is. Whatever cannot be read is
 * INVALID_ARGUMENT naming the file.
 */
export function readFileBoundedSync(path: string, what: string, limit = MAX_STDIN_BYTES): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw cannotRead(what, error);
  }
  try {
    if (fstatSync(fd).isDirectory()) throw cannotRead(what, new Error("it is a folder"));
    return readWholeSync(fd, limit, what);
  } catch (error) {
    if (error instanceof ArbeitError) throw error;
    throw cannotRead(what, error);
  } finally {
    closeSync(fd);
  }
}

function cannotRead(what: string, error: unknown): ArbeitError {
  const name = what.charAt(0).toLowerCase() + what.slice(1);
  return new ArbeitError("INVALID_ARGUMENT", `Cannot read ${name}: ${(error as Error).message}.`);
}

function readWholeSync(fd: number, limit: number, what: string): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  let total = 0;
  for (;;) {
    let bytes: number;
    try {
      bytes = readSync(fd, buffer, 0, buffer.length, null);
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
