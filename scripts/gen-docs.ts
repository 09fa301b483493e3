/**
 * Generates docs/tools.md from the tool catalogue (src/tools) and the named queries of
 * arbeit_query (src/service/queries.ts), and docs/tool-tokens.md from a real MCP tools/list, so
 * neither can drift from the code. test/docs/tools-doc.test.ts fails when either is stale.
 *
 *   npm run docs            # rewrite both
 *   npm run docs -- --check # exit 1 if either is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { ERROR_CODES, ERROR_SUGGESTIONS } from "../src/domain/errors.js";
import { WARNING_CODES, WARNING_MEANINGS } from "../src/domain/types.js";
import { ATTENTION_CODES } from "../src/maintenance/status.js";
import { inputJsonSchema, type JsonSchema } from "../src/mcp/tool-json-schema.js";
import { QUERIES } from "../src/service/queries.js";
import { TASK_FIELDS } from "../src/service/summaries.js";
import { TOOLS } from "../src/tools/catalogue.js";
import type { ToolDef } from "../src/tools/define.js";
import { measureToolTokens, toolTokensTable } from "./tool-tokens.js";

export const TOOLS_DOC = new URL("../docs/tools.md", import.meta.url);
export const TOOL_TOKENS_DOC = new URL("../docs/tool-tokens.md", import.meta.url);

type Schema = JsonSchema & {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
};

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const code = (value: unknown) => `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;

function range(min: number | undefined, max: number | undefined, unit: string): string | undefined {
  if (min !== undefined && max !== undefined) return `${min}–${max}${unit}`;
  if (max !== undefined) return `at most ${max}${unit}`;
  if (min !== undefined) return `at least ${min}${unit}`;
  return undefined;
}

/** A JSON Schema node as a short type ("string", "tkt-… id", "array of …") and its limits. */
function describe(schema: Schema): { type: string; limits: string[] } {
  if (schema.anyOf) {
    const parts = schema.anyOf.map(describe);
    return { type: parts.map((p) => p.type).join(" or "), limits: parts.flatMap((p) => p.limits) };
  }
  if (schema.enum) return { type: schema.enum.map(code).join(" | "), limits: [] };
  switch (schema.type) {
    case "string": {
      const limits = [
        range(schema.minLength, schema.maxLength, " chars"),
        schema.pattern && `pattern ${code(schema.pattern)}`,
      ];
      return {
        type: schema.format ? `string (${schema.format})` : "string",
        limits: limits.filter(Boolean) as string[],
      };
    }
    case "integer":
    case "number":
      return { type: schema.type, limits: [range(schema.minimum, schema.maximum, "")].filter(Boolean) as string[] };
    case "array": {
      const item = describe(schema.items ?? {});
      const count = range(schema.minItems, schema.maxItems, " items");
      const of = item.type.includes(" | ") ? `(${item.type})` : item.type;
      return {
        type: `array of ${of}`,
        limits: [count, ...item.limits.map((l) => `each ${l}`)].filter(Boolean) as string[],
      };
    }
    case "object":
      return { type: "object", limits: [] };
    case undefined:
      return { type: "any JSON", limits: [] };
    default:
      return { type: schema.type, limits: [] };
  }
}

function parameterTable(schema: Schema): string {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return "No parameters.";
  const required = new Set(schema.required ?? []);
  const rows = properties.map(([name, property]) => {
    const { type, limits } = describe(property);
    const notes = [property.description, ...limits].filter(Boolean).join("; ");
    return `| \`${name}\` | ${cell(type)} | ${required.has(name) ? "yes" : ""} | ${cell(notes)} |`;
  });
  return ["| parameter | type | required | notes |", "|---|---|---|---|", ...rows].join("\n");
}

function annotationLine(tool: ToolDef): string {
  const a = tool.annotations;
  const flags = [
    a.readOnlyHint ? "read-only" : "writes",
    a.destructiveHint ? "destructive" : null,
    a.idempotentHint ? "idempotent" : null,
  ];
  return `Annotations: ${flags.filter(Boolean).join(", ")} (${Object.entries(a)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ")}).`;
}

function toolSection(tool: ToolDef): string {
  const parts = [
    `## ${tool.name}`,
    `**${tool.title}.** ${tool.description}`,
    annotationLine(tool),
    parameterTable(inputJsonSchema(tool.input) as Schema),
  ];
  if (tool.name === "arbeit_query")
    parts.push("The queries and their `params` are listed under [Named queries](#named-queries).");
  return parts.join("\n\n");
}

function querySection(name: string, def: { summary: string; params: z.ZodType }): string {
  return [`### ${name}`, def.summary, parameterTable(inputJsonSchema(def.params) as Schema)].join("\n\n");
}

/** How every list answer shows tasks and pages: the contract JSON consumers read lists by. */
function listsSection(): string {
  return [
    "### Tasks in lists, and pages",
    "A list shows each task as a summary, made to be cheap to read: `id`, `title` and `status`, then only what is set and not at its default: `type`, `priority` (when not 2), `parent_id`, `blocked: true` with `blocked_by` (while an unfinished blocker holds the task), `owner`, `lease_expires_at` and `claim_session` (while claimed), `active_form`, and `list_id` (when not `default`). A field that is missing is null, empty, false or at that default. `ready` leaves out `status` too: every ready task is open.",
    `\`version\`, \`created_at\`, \`updated_at\` and the text fields come only when asked: \`fields\` adds any of ${TASK_FIELDS.map((f) => `\`${f}\``).join(", ")} to each summary, shown as they are, null included; \`full: true\` returns whole tasks, as \`arbeit_task_get\` does.`,
    "A list that can run long takes `limit` and answers `has_more`; when more remain it adds `next_cursor`. Pass that back as `cursor` (with the same other params) for the next page. A cursor marks the last row shown in the query's order, not a count of rows, so tasks created between two pages neither repeat a row nor hide one (a task whose priority changes meanwhile may move to the other side of it). It is opaque and bound to what it pages: a cursor that was altered, that another query handed out, or that comes with another list or other filters (or, for `ready`, from another caller) is refused with `INVALID_ARGUMENT`, since it would silently skip rows.",
  ].join("\n\n");
}

/** Every error code with the advice that comes with it by default (messages add the specifics). */
function errorSection(): string {
  const rows = ERROR_CODES.map((code) => `| \`${code}\` | ${cell(ERROR_SUGGESTIONS[code].join(" "))} |`);
  return [
    "## Error codes",
    "Every failure has one of these codes, with a message naming what was wrong and `suggestions` (by default the advice below). Codes starting `STORE_` are the machine's, not the call's: a read-only, full, damaged or unreachable store; their `details.path` names it. `INTERNAL_ERROR` alone means a bug in Arbeit.",
    `| code | what to do |\n|---|---|\n${rows.join("\n")}`,
  ].join("\n\n");
}

/** The codes a successful call can carry as warnings, and those `arbeit status` reports. */
function warningSection(): string {
  const rows = WARNING_CODES.map((code) => `| \`${code}\` | ${cell(WARNING_MEANINGS[code])} |`);
  const attention = Object.entries(ATTENTION_CODES).map(([code, meaning]) => `| \`${code}\` | ${cell(meaning)} |`);
  return [
    "## Warning codes",
    "A call that succeeds can carry `warnings`, each with one of these codes and a message naming the tasks concerned. A warning never stops the call: what it did is done.",
    `| code | meaning |\n|---|---|\n${rows.join("\n")}`,
    "`arbeit status` lists what needs a person's attention under `attention`, each with one of these codes, a message and often a `hint`:",
    `| code | meaning |\n|---|---|\n${attention.join("\n")}`,
  ].join("\n\n");
}

export function renderToolsDoc(): string {
  const summary = TOOLS.map((tool) => {
    const a = tool.annotations;
    return `| [\`${tool.name}\`](#${tool.name}) | ${cell(tool.title)} | ${a.readOnlyHint ? "yes" : ""} | ${a.destructiveHint ? "yes" : ""} | ${a.idempotentHint ? "yes" : ""} |`;
  });
  const queries = Object.entries(QUERIES) as [string, { summary: string; params: z.ZodType }][];
  return `${[
    "# Tools",
    "<!-- Generated by scripts/gen-docs.ts from src/tools and src/service/queries.ts. Do not edit: run `npm run docs`. -->",
    `Arbeit has ${TOOLS.length} tools. Every front end — \`arbeit call\` and the CLI subcommands, the MCP server, the AI SDK tools, the OpenCode plugin — serves the same tools with the same arguments, and every call returns the same envelope:`,
    "```\n{ success: boolean, data?: ..., warnings?: [{ code, message }], error?: { code, message, suggestions?, details? } }\n```",
    "An argument that fails the schema is an error envelope too, with the field's own code where there is one (`INVALID_STATUS`, `INVALID_TYPE`, `INVALID_TEMPLATE`, `TITLE_REQUIRED`, `INVALID_ID`, `FIELD_TOO_LARGE`, `UNKNOWN_QUERY`), else `INVALID_ARGUMENT`.",
    "| tool | title | read-only | destructive | idempotent |\n|---|---|---|---|---|\n" + summary.join("\n"),
    ...TOOLS.map(toolSection),
    "## Named queries",
    `\`arbeit_query\` takes \`query\` (one of the ${queries.length} names below) and \`params\`, an object with that query's parameters.`,
    listsSection(),
    ...queries.map(([name, def]) => querySection(name, def)),
    errorSection(),
    warningSection(),
  ].join("\n\n")}\n`;
}

export async function renderToolTokensDoc(): Promise<string> {
  const measured = await measureToolTokens();
  return `${[
    "# Tool list size",
    "<!-- Generated by scripts/gen-docs.ts (measured by scripts/tool-tokens.ts). Do not edit: run `npm run docs`. -->",
    "An MCP client receives the tools/list result once per connection and sends the tools to the model on every turn, so every token in a name, description or schema is paid again and again. This is that result from `arbeit mcp`, counted with a real tokenizer (gpt-tokenizer, o200k_base).",
    `**All ${measured.tools.length} tools: ${measured.total} tokens** (target: under ${measured.target}; a test enforces it). ${measured.model_facing} of them are what a host forwards to the model: name, description and input schema, without titles and annotations. In cl100k_base: ${measured.total_cl100k}.`,
    toolTokensTable(measured),
    "Re-measure with `npm run tool-tokens` (`-- --json` for machine-readable output; bench code can import `measureToolTokens` from scripts/tool-tokens.ts).",
  ].join("\n\n")}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const docs: [URL, string][] = [
    [TOOLS_DOC, renderToolsDoc()],
    [TOOL_TOKENS_DOC, await renderToolTokensDoc()],
  ];
  for (const [file, fresh] of docs) {
    const name = `docs/${file.pathname.split("/").pop()}`;
    if (process.argv.includes("--check")) {
      if (readFileSync(file, "utf8") !== fresh) {
        process.stderr.write(`${name} is stale: run \`npm run docs\`.\n`);
        process.exitCode = 1;
      }
    } else {
      writeFileSync(file, fresh);
      process.stdout.write(`wrote ${name}\n`);
    }
  }
}
