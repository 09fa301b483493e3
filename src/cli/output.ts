import { fstatSync, statSync } from "node:fs";
import type { Envelope } from "../tools/envelope.js";
import { write } from "./direct-write.js";
import { renderText } from "./render-text.js";

export { readerGone, write } from "./direct-write.js";

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
