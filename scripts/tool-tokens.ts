/**
 * How many tokens the tool list costs an agent: every turn, an MCP client sends the model the
 * tools/list result (names, titles, descriptions, input schemas, annotations). This asks a real
 * in-process MCP server for that list and counts it with a real tokenizer (o200k_base, GPT-4o's;
 * cl100k_base alongside). Target: under 3,000 tokens for all tools.
 *
 *   npx tsx scripts/tool-tokens.ts          # table per tool + total
 *   npx tsx scripts/tool-tokens.ts --json   # the same as JSON (bench/run.ts can import measureToolTokens)
 */
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer } from "../src/mcp/server.js";
import { countTokens } from "../test/helpers/tokenizer.js";

// gpt-tokenizer is installed on demand into the test cache (test/helpers/tokenizer.ts).
const o200k = (text: string) => countTokens(text, "o200k_base");
const cl100k = (text: string) => countTokens(text, "cl100k_base");

export const TOOL_TOKEN_TARGET = 3000;

export interface ToolTokens {
  /** Tokens of the whole tools/list result, as JSON, in o200k_base. */
  total: number;
  total_cl100k: number;
  /** Only what a host forwards to the model: name, description, input schema (no title, annotations). */
  model_facing: number;
  target: number;
  tools: { name: string; tokens: number; description_tokens: number; schema_tokens: number }[];
}

/** The tools/list result exactly as a client receives it from `arbeit mcp`. */
export async function listToolsAsClient(): Promise<{ tools: Record<string, unknown>[] }> {
  const { server } = createMcpServer({ cwd: process.cwd(), version: "0.0.0" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "tool-tokens", version: "0.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return (await client.listTools()) as { tools: Record<string, unknown>[] };
  } finally {
    await client.close();
    await server.close();
  }
}

export async function measureToolTokens(): Promise<ToolTokens> {
  const result = await listToolsAsClient();
  const json = JSON.stringify(result);
  return {
    total: o200k(json),
    total_cl100k: cl100k(json),
    model_facing: o200k(
      JSON.stringify(result.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))),
    ),
    target: TOOL_TOKEN_TARGET,
    tools: result.tools.map((tool) => ({
      name: String(tool.name),
      tokens: o200k(JSON.stringify(tool)),
      description_tokens: o200k(String(tool.description ?? "")),
      schema_tokens: o200k(JSON.stringify(tool.inputSchema)),
    })),
  };
}

export function toolTokensTable(measured: ToolTokens): string {
  return [
    "| tool | tokens | description | input schema |",
    "|---|---:|---:|---:|",
    ...measured.tools.map((t) => `| ${t.name} | ${t.tokens} | ${t.description_tokens} | ${t.schema_tokens} |`),
    `| **all ${measured.tools.length} tools (tools/list result)** | **${measured.total}** | | |`,
  ].join("\n");
}

export function formatToolTokens(measured: ToolTokens): string {
  return [
    toolTokensTable(measured),
    "",
    `Tokens in o200k_base (cl100k_base: ${measured.total_cl100k}); target: under ${measured.target}.`,
    `Of these, ${measured.model_facing} are what a host forwards to the model (name, description, input schema).`,
    "",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const measured = await measureToolTokens();
  process.stdout.write(process.argv.includes("--json") ? `${JSON.stringify(measured)}\n` : formatToolTokens(measured));
  process.exitCode = measured.total < measured.target ? 0 : 1;
}
