import { writeSync } from "node:fs";

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
