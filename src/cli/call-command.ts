import { readFileSync } from "node:fs";
import { findTool, TOOL_NAMES } from "../tools/catalogue.js";
import { invokeTool } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope } from "./output.js";
import { cliToolContext } from "./tool-context.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit call <tool_name> ['<json arguments>' | -]

Runs one tool and prints its envelope {success, data?, warnings?, error?} as JSON.
Arguments default to {}; "-" reads them from standard input.
Exit 0 on success, 1 on a tool error (the envelope says which), 2 on a usage error.
`;

/** `arbeit call`: the stable JSON contract for scripts and hooks (DESIGN §7). */
export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(`${USAGE}\nTools: ${TOOL_NAMES.join(", ")}\n`);
    return 0;
  }
  const [name, raw, ...extra] = argv;
  if (name === undefined) throw new UsageError("Name the tool to call.", USAGE);
  if (extra.length > 0)
    throw new UsageError(`Unexpected argument ${JSON.stringify(extra[0])}; pass all arguments as one JSON object.`);
  const tool = findTool(name);
  if (!tool) throw new UsageError(`There is no tool named ${JSON.stringify(name)}.`, `Tools: ${TOOL_NAMES.join(", ")}`);
  const text = raw === "-" ? readFileSync(0, "utf8") : (raw ?? "{}");
  let args: unknown;
  try {
    args = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The arguments are not valid JSON: ${(error as Error).message}`);
  }
  const ctx = cliToolContext(options);
  try {
    // JSON in, JSON out: call is for scripts, so it prints JSON even on a terminal unless asked otherwise.
    return printEnvelope(await invokeTool(tool, args, ctx), true);
  } finally {
    await ctx.close();
  }
}
