import type { Envelope } from "../tools/envelope.js";
import { renderText } from "./render-text.js";

/** JSON when piped or asked for (the stable contract for scripts and hooks), text on a terminal. */
export function wantsJson(forced: boolean): boolean {
  return forced || !process.stdout.isTTY;
}

export function printEnvelope(envelope: Envelope, json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify(envelope)}\n`);
  else {
    const { stdout, stderr } = renderText(envelope);
    process.stdout.write(stdout);
    process.stderr.write(stderr);
  }
  return envelope.success ? 0 : 1;
}
