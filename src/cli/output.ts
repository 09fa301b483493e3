import { fstatSync, statSync, writeSync } from "node:fs";
import type { Envelope } from "../tools/envelope.js";
import { renderText } from "./render-text.js";

/**
 * Output goes straight to the file descriptors: merely touching process.stdout builds a stream
 * object, a few milliseconds of every CLI call's start-up for one line of JSON.
 */
export function write(fd: number, text: string): void {
  let buffer = Buffer.from(text);
  while (buffer.length > 0) {
    try {
      buffer = buffer.subarray(writeSync(fd, buffer));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The reader went away (`arbeit ... | head -c1`): nobody is left to tell, so end quietly.
      if (code === "EPIPE") readerGone();
      // A non-blocking pipe that is full: wait for the reader, then go on.
      if (code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/**
 * What a command-line tool does when its output pipe closes: stop at once, without a word (there
 * is no one to read it) and with success, as `head` asked for no more.
 */
export function readerGone(): never {
  process.exit(0);
}

/**
 * Whether stdout is a terminal, without loading node:tty (which pulls in the whole network
 * stack): a terminal is a character device other than /dev/null. On Windows, ask tty.
 */
function stdoutIsTerminal(): boolean {
  if (process.platform === "win32") return process.stdout.isTTY === true;
  try {
    const out = fstatSync(1);
    return out.isCharacterDevice() && out.rdev !== statSync("/dev/null").rdev;
  } catch {
    return false;
  }
}

/** JSON when piped or asked for (the stable contract for scripts and hooks), text on a terminal. */
export function wantsJson(forced: boolean): boolean {
  return forced || !stdoutIsTerminal();
}

export function printEnvelope(envelope: Envelope, json: boolean): number {
  if (json) write(1, `${JSON.stringify(envelope)}\n`);
  else {
    const { stdout, stderr } = renderText(envelope);
    write(1, stdout);
    write(2, stderr);
  }
  return envelope.success ? 0 : 1;
}
