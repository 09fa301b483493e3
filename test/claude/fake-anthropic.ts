import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted Anthropic Messages API on 127.0.0.1 (docs/claude-code-findings.md) for the real Claude Code CLI:
 * POST /v1/messages (server-sent events when `stream` is true, plain JSON otherwise),
 * POST /v1/messages/count_tokens and GET /v1/models. `script` picks each assistant turn from the
 * request (system prompt, tools, the tool_results that came back), never from a request count.
 * Every request body is recorded.
 */

export interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  [key: string]: unknown;
}

export interface Message {
  /** Claude Code also puts `role: "system"` entries (hook context, reminders) among the messages. */
  role: "user" | "assistant" | "system";
  content: string | ContentBlock[];
}

export interface Tool {
  name: string;
  description?: string;
  input_schema?: unknown;
  [key: string]: unknown;
}

export interface MessagesRequest {
  model: string;
  max_tokens?: number;
  stream?: boolean;
  system?: string | ContentBlock[];
  messages: Message[];
  tools?: Tool[];
  metadata?: unknown;
  [key: string]: unknown;
}

/** One tool call of a scripted turn; give it an `id` to recognise its tool_result later. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

/** An assistant turn: text, tool calls, or both (text first). */
export interface Turn {
  text?: string;
  tools?: ToolCall[];
  /** Reported as usage.input_tokens (default 100). */
  inputTokens?: number;
}

/** A script may take its time: an async turn holds the model's answer back until it settles. */
export type Script = (request: MessagesRequest) => Turn | Promise<Turn>;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export interface FakeAnthropic {
  port: number;
  baseUrl: string;
  /** Every POST /v1/messages body, in arrival order. */
  requests: MessagesRequest[];
  /** Every HTTP request (any path), for debugging. */
  all: RecordedRequest[];
  /** Errors thrown by the script, answered with HTTP 500. */
  errors: unknown[];
  close(): Promise<void>;
}

const MODEL_IDS = ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001"];

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

function blocksOf(turn: Turn): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (turn.text !== undefined || !turn.tools?.length) blocks.push({ type: "text", text: turn.text ?? "" });
  for (const call of turn.tools ?? []) {
    blocks.push({ type: "tool_use", id: call.id ?? `toolu_fake_${++counter}`, name: call.name, input: call.input });
  }
  return blocks;
}

function usage(turn: Turn) {
  return {
    input_tokens: turn.inputTokens ?? 100,
    output_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": `req_fake_${++counter}` });
  res.end(JSON.stringify(body));
}

function sendTurn(res: ServerResponse, request: MessagesRequest, turn: Turn): void {
  const blocks = blocksOf(turn);
  const stopReason = blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
  const message = {
    id: `msg_fake_${++counter}`,
    type: "message",
    role: "assistant",
    model: request.model,
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: usage(turn),
  };
  if (!request.stream) {
    sendJson(res, 200, message);
    return;
  }
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "request-id": `req_fake_${++counter}`,
  });
  const event = (type: string, data: object) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", {
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      event("content_block_start", { index, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    } else {
      event("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      event("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    }
    event("content_block_stop", { index });
  });
  event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } });
  event("message_stop", {});
  res.end();
}

export async function startFakeAnthropic(script: Script): Promise<FakeAnthropic> {
  const requests: MessagesRequest[] = [];
  const all: RecordedRequest[] = [];
  const errors: unknown[] = [];
  const server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const raw = await readBody(req);
      const body = raw ? JSON.parse(raw) : undefined;
      all.push({ method: req.method ?? "", path, headers: req.headers, body });
      if (req.method === "POST" && path === "/v1/messages") {
        const request = body as MessagesRequest;
        requests.push(request);
        sendTurn(res, request, await script(request));
      } else if (req.method === "POST" && path === "/v1/messages/count_tokens") {
        sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
      } else if (req.method === "GET" && path.startsWith("/v1/models")) {
        const data = MODEL_IDS.map((id) => ({
          type: "model",
          id,
          display_name: id,
          created_at: "2025-01-01T00:00:00Z",
        }));
        sendJson(res, 200, { data, has_more: false, first_id: data[0]?.id, last_id: data.at(-1)?.id });
      } else {
        sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no ${req.method} ${path}` } });
      }
    } catch (error) {
      errors.push(error);
      if (!res.headersSent) {
        sendJson(res, 500, { type: "error", error: { type: "api_error", message: String(error) } });
      } else res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    all,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Text of a content (a string or blocks), including text nested in tool_result blocks. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: ContentBlock) => {
      if (typeof block?.text === "string") return block.text;
      if (block?.type === "tool_result") return textOf(block.content);
      return "";
    })
    .join("\n");
}

export const systemText = (request: MessagesRequest): string => textOf(request.system ?? "");

/** Text of the conversation's first user message (a sub-agent's is its task prompt). */
export function firstUserText(request: MessagesRequest): string {
  const first = request.messages.find((message) => message.role === "user");
  return first ? textOf(first.content) : "";
}

/**
 * The text blocks of the last user message, without its tool_results (a tool's output must not
 * pass for an instruction: the Agent tool's result, for one, mentions a "summary").
 */
export function lastUserText(request: MessagesRequest): string {
  const last = request.messages.filter((message) => message.role === "user").at(-1);
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("\n");
}

/** tool_results in the conversation by tool_use_id. */
export function toolResults(request: MessagesRequest): Map<string, { text: string; isError: boolean }> {
  const results = new Map<string, { text: string; isError: boolean }>();
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
        results.set(block.tool_use_id, { text: textOf(block.content), isError: block.is_error === true });
      }
    }
  }
  return results;
}

export const toolNames = (request: MessagesRequest): string[] => (request.tools ?? []).map((tool) => tool.name);
