import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted OpenAI-compatible chat model on 127.0.0.1 (docs/opencode.md): answers
 * POST /v1/chat/completions with server-sent events, choosing each reply with `script` from the
 * request (the conversation so far), never from a count of requests.
 */

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: any } }>;
}

export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}

export type Reply =
  | { text: string; promptTokens?: number }
  | ({ promptTokens?: number } & ToolCall)
  /** Several tool calls in one assistant step (indexes 0, 1, ...), which OpenCode runs together. */
  | { tools: ToolCall[]; promptTokens?: number };

export interface FakeModel {
  port: number;
  requests: ChatRequest[];
  /** Errors thrown by the script, which the model answers with HTTP 500. */
  errors: unknown[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

let counter = 0;

function send(res: ServerResponse, reply: Reply, model: string): void {
  const id = `chatcmpl-${++counter}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finish: string | null, extra: object = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const usage = {
    usage: {
      prompt_tokens: reply.promptTokens ?? 100,
      completion_tokens: 10,
      total_tokens: (reply.promptTokens ?? 100) + 10,
    },
  };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  if ("tool" in reply || "tools" in reply) {
    const calls = "tools" in reply ? reply.tools : [reply];
    const toolCalls = calls.map((call, index) => ({
      index,
      id: `call_${counter}_${index}`,
      type: "function",
      function: { name: call.tool, arguments: JSON.stringify(call.args) },
    }));
    res.write(chunk({ role: "assistant", tool_calls: toolCalls }, null));
    res.write(chunk({}, "tool_calls", usage));
  } else {
    res.write(chunk({ role: "assistant", content: reply.text }, null));
    res.write(chunk({}, "stop", usage));
  }
  res.end("data: [DONE]\n\n");
}

/** The script may take its time (an async reply holds the model's answer back until it settles). */
export async function startFakeModel(script: (request: ChatRequest) => Reply | Promise<Reply>): Promise<FakeModel> {
  const requests: ChatRequest[] = [];
  const errors: unknown[] = [];
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(await readBody(req)) as ChatRequest;
      requests.push(request);
      send(res, await script(request), request.model);
    } catch (error) {
      errors.push(error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Text of a message's content, whether a string or an array of parts. */
export function textOf(message: ChatMessage): string {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) {
    return message.content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  }
  return "";
}

/** The calls the assistant made so far, with their results, in order. */
export function toolHistory(request: ChatRequest): Array<{ name: string; args: any; result: string }> {
  const results = new Map<string, string>();
  for (const message of request.messages) {
    if (message.role === "tool" && message.tool_call_id) results.set(message.tool_call_id, textOf(message));
  }
  const calls: Array<{ name: string; args: any; result: string }> = [];
  for (const message of request.messages) {
    for (const call of message.tool_calls ?? []) {
      let args: unknown;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        args = undefined;
      }
      calls.push({ name: call.function.name, args, result: results.get(call.id) ?? "" });
    }
  }
  return calls;
}
