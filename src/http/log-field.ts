/**
 * One field of a log line, for text a client chose (a tool's name, a JSON-RPC method, a path, a
 * token's name). A log is read in a terminal and split into lines and fields by tools, so a
 * client's text must neither start a line of its own, nor pass for several fields, nor send a
 * terminal what it acts on (escape sequences, bidi controls that reorder what is shown). One
 * plain word is written as it is; anything else is written as a JSON string, with the controls
 * JSON would leave raw (DEL, C1, format and separator characters) escaped too. Over-long text is
 * cut, so one request cannot flood the log. One of Arbeit's secrets in it is written redacted.
 */

import { redactSecrets } from "../domain/secrets.js";

/** The most characters of a client's text a field shows. */
export const LOG_FIELD_CHARS = 256;

const PLAIN = /^[^\s"\\\p{C}]+$/u;
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

const escaped = (char: string) =>
  Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");

/** A client's text as a log may hold it: one of Arbeit's secrets redacted, cut after LOG_FIELD_CHARS. */
function logText(given: string): string {
  // A token sent where it does not belong (a path's query, a tool's name) stays out of the log.
  const text = redactSecrets(given);
  return text.length > LOG_FIELD_CHARS ? `${text.slice(0, LOG_FIELD_CHARS - 1)}…` : text;
}

export function logField(given: string): string {
  const shown = logText(given);
  if (PLAIN.test(shown)) return shown;
  return JSON.stringify(shown).replace(HIDDEN, escaped);
}

/**
 * One JSON object as one log line: every string in it redacted and cut as a field is, and the
 * controls JSON leaves raw (DEL, C1, format and separator characters) escaped, so the line stays
 * one line of valid JSON that acts on no terminal.
 */
export function jsonLogLine(record: Record<string, string | number | null>): string {
  const safe = Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, typeof value === "string" ? logText(value) : value]),
  );
  return JSON.stringify(safe).replace(HIDDEN, escaped);
}
