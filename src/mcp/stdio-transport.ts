/**
 * MCP over stdin/stdout, one JSON-RPC message per line. The SDK's own stdio transport closes for
 * good when a message is over its buffer limit (the server then exits without a word) and drops
 * lines that are not JSON; this one answers both with a JSON-RPC error, says why on stderr, and
 * keeps serving: one bad message from a client must not end the session.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** Far above any real tool call (field limits keep those to a few MiB), far below memory trouble. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** JSON-RPC's codes for a line that is not JSON, and for JSON that is not a request. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

const NEWLINE = 0x0a;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #limit: number;
  /** The current line so far, in pieces; `size` is their total. */
  #pieces: Buffer[] = [];
  #size = 0;
  /** Set while the rest of an oversized line is being skipped up to its newline. */
  #skipping = false;
  #closed = false;

  constructor(
    input: NodeJS.ReadableStream = process.stdin,
    output: NodeJS.WritableStream = process.stdout,
    limit = MAX_MESSAGE_BYTES,
  ) {
    this.#input = input;
    this.#output = output;
    this.#limit = limit;
  }

  async start(): Promise<void> {
    this.#input.on("data", this.#onData);
    this.#input.on("error", this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off("data", this.#onData);
    this.#input.off("error", this.#onError);
    this.#pieces = [];
    this.#size = 0;
    this.onclose?.();
  }

  readonly #onError = (error: Error): void => this.onerror?.(error);

  readonly #onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (;;) {
      const end = data.indexOf(NEWLINE);
      const piece = end === -1 ? data : data.subarray(0, end);
      if (!this.#skipping) {
        if (this.#size + piece.length > this.#limit) {
          this.#skipping = true;
          this.#pieces = [];
          this.#size = 0;
        } else if (piece.length > 0) {
          this.#pieces.push(piece);
          this.#size += piece.length;
        }
      }
      if (end === -1) return;
      if (this.#skipping) {
        this.#skipping = false;
        this.#reject(INVALID_REQUEST, `message is over the ${this.#limit / (1024 * 1024)} MiB limit; it was ignored`);
      } else this.#line(Buffer.concat(this.#pieces, this.#size).toString("utf8"));
      this.#pieces = [];
      this.#size = 0;
      data = data.subarray(end + 1);
    }
  };

  #line(text: string): void {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#reject(PARSE_ERROR, "message is not valid JSON; it was ignored");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown } | null)?.id;
      this.#reject(
        INVALID_REQUEST,
        "message is not a JSON-RPC 2.0 request, notification or response; it was ignored",
        typeof id === "string" || typeof id === "number" ? id : null,
      );
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** Tells the client (whose request id is unknown, so null) and the person reading stderr. */
  #reject(code: number, reason: string, id: string | number | null = null): void {
    process.stderr.write(`arbeit mcp: a ${reason}.\n`);
    this.onerror?.(new Error(`The client's ${reason}.`));
    void this.send({ jsonrpc: "2.0", id, error: { code, message: `Arbeit: the ${reason}.` } } as JSONRPCMessage);
  }
}
