import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The SDK client over the pipes of an `arbeit mcp` a test spawned itself. Unlike the SDK's stdio
 * transport, which signals a server that is slow to go, it only ever closes stdin, so how the
 * process ends is the server's own doing; and a test may write raw lines past the client.
 */
export class ChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Every message the server sent, including answers to raw lines the client never sent. */
  readonly seen: JSONRPCMessage[] = [];
  #buffer = "";

  constructor(readonly child: ChildProcessWithoutNullStreams) {}

  async start(): Promise<void> {
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      this.#buffer += chunk;
      for (let end = this.#buffer.indexOf("\n"); end !== -1; end = this.#buffer.indexOf("\n")) {
        const message = JSON.parse(this.#buffer.slice(0, end)) as JSONRPCMessage;
        this.#buffer = this.#buffer.slice(end + 1);
        this.seen.push(message);
        // Answers to raw lines carry id null: they are for the test, not for the SDK client.
        if ((message as { id?: unknown }).id !== null) this.onmessage?.(message);
      }
    });
    this.child.on("close", () => this.onclose?.());
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.raw(`${JSON.stringify(message)}\n`);
  }

  raw(text: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.child.stdin.write(text, (error) => (error ? reject(error) : resolve())),
    );
  }

  async close(): Promise<void> {
    this.child.stdin.end();
  }

  /** Waits until the server has sent a message with id null beyond the first `count`. */
  async nullAnswers(count: number): Promise<JSONRPCMessage[]> {
    for (let i = 0; i < 600; i++) {
      const answers = this.seen.filter((message) => (message as { id?: unknown }).id === null);
      if (answers.length >= count) return answers;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the server sent ${this.seen.length} messages, not the ${count} error answers expected`);
  }
}
