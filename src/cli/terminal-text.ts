/**
 * Text the CLI prints for a person is read by a terminal, and user text (titles, descriptions,
 * context, file paths, names) may carry what a terminal acts on: ESC and C1 sequences that retitle
 * the window, clear the screen or recolour everything after them, BEL, backspace and carriage
 * return that overwrite what was shown, and bidi controls that reorder it. Each such character is
 * shown as a visible escape instead (`\x1b`, `\x9b`, `\u202e`), so the text reads as what it is.
 * JSON output is left alone: it is data, and JSON.stringify already escapes C0 characters.
 */

/** C0, DEL and C1 (\p{Cc}), and every bidi embedding, override, isolate and mark. */
const CONTROL = /[\p{Cc}\p{Bidi_Control}]/gu;
const IS_CONTROL = /^[\p{Cc}\p{Bidi_Control}]$/u;

function escaped(char: string): string {
  const code = char.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * `text` with every control character escaped. With `newlines`, line breaks are kept, for a field
 * shown over several lines; a one-line place (a title in a list, a key) escapes them too.
 */
export function terminalSafe(text: string, options: { newlines?: boolean } = {}): string {
  return text.replace(CONTROL, (char) => (char === "\n" && options.newlines ? char : escaped(char)));
}

/**
 * One line of at most `max` characters: escaped as terminalSafe does, and, when longer, cut to
 * `max` with an ellipsis as its last character. An escape is never cut in half.
 */
export function terminalLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const safe = terminalSafe(text);
  if (safe.length <= max || [...safe].length <= max) return safe;
  let out = "";
  let length = 0;
  for (const char of text) {
    const piece = IS_CONTROL.test(char) ? escaped(char) : char;
    // Counted in characters: an escape is as wide as it is long, any other character is one.
    const width = piece === char ? 1 : piece.length;
    if (length + width > max - 1) break;
    out += piece;
    length += width;
  }
  return `${out}…`;
}
