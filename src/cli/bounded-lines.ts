import { ArbeitError } from "../domain/errors.js";

/**
 * Splits a byte stream into lines, as readline does, but refuses a line longer than `limit` bytes
 * (INVALID_IMPORT naming its number) instead of gathering it without end: a file with no newline,
 * or a hostile one, cannot exhaust memory or Node's string limit.
 */
export async function* boundedLines(
  input: AsyncIterable<Buffer | string>,
  limit: number,
  what = "The file",
): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pieces: Buffer[] = [];
  let size = 0;
  let number = 0;
  const line = (): string => {
    number++;
    const bytes = Buffer.concat(pieces, size);
    pieces = [];
    size = 0;
    try {
      const text = decoder.decode(bytes);
      return text.endsWith("\r") ? text.slice(0, -1) : text;
    } catch {
      throw new ArbeitError("INVALID_IMPORT", `${what}: line ${number} is not valid UTF-8.`, {
        details: { line: number },
      });
    }
  };
  for await (const chunk of input) {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let end = data.indexOf(0x0a); ; end = data.indexOf(0x0a)) {
      const piece = end === -1 ? data : data.subarray(0, end);
      if (size + piece.length > limit) {
        throw new ArbeitError(
          "INVALID_IMPORT",
          `${what}: line ${number + 1} is over ${limit / (1024 * 1024)} MiB, longer than any line an export writes.`,
          { details: { line: number + 1, limit_bytes: limit } },
        );
      }
      pieces.push(piece);
      size += piece.length;
      if (end === -1) break;
      yield line();
      data = data.subarray(end + 1);
    }
  }
  if (size > 0) yield line();
}
