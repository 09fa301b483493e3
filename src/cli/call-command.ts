import { z } from "zod";
import { findTool, TOOL_NAMES } from "../tools/catalogue.js";
import { failure } from "../tools/envelope.js";
import { flagGuess, type GlobalOptions } from "./global-options.js";
import { printEnvelope, write } from "./output.js";
import { readStdinSync } from "./stdin.js";
import { closest } from "./suggest.js";
import { callTool } from "./tool-call.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit call <tool_name> ['<json arguments>' | -]

Runs one tool and prints its envelope {success, data?, warnings?, error?} as JSON: the stable
contract for scripts and hooks. Arguments default to {}; "-" reads them from standard input.
Exit 0 on success, 1 on a tool error (the envelope says which), 2 on a usage error.
A tool that writes takes ARBEIT_REQUEST_ID as its request_id when the JSON names none.

  arbeit call arbeit_query '{"query": "ready", "params": {"limit": 5}}'
  echo '{"task_id": "tkt-a7f3b2c1"}' | arbeit call arbeit_task_get -
  arbeit call arbeit_task_create --help      (the tool's JSON input schema)
`;

function toolList(): string {
  return `Tools: ${TOOL_NAMES.join(", ")}`;
}

/** `arbeit call <tool> --help`: what a script author needs, the description and the JSON schema. */
function toolHelp(name: string): string {
  const tool = findTool(name)!;
  const schema = JSON.stringify(z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }), null, 2);
  return `Usage: arbeit call ${tool.name} ['<json arguments>' | -]\n\n${tool.description}\n\nInput schema:\n${schema}\n`;
}

function unknownTool(name: string): UsageError {
  const guess = closest(name, TOOL_NAMES) ?? TOOL_NAMES.find((tool) => tool === `arbeit_${name}`);
  return new UsageError(
    `There is no tool named ${JSON.stringify(name)}.${guess ? ` Did you mean ${guess}?` : ""}`,
    toolList(),
  );
}

function readArguments(raw: string | undefined): unknown {
  const text = raw === "-" ? readStdinSync() : (raw ?? "{}");
  try {
    return text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `The arguments are not valid JSON (${(error as Error).message}).`,
      `Pass one JSON object, quoted for the shell: arbeit call <tool_name> '{"key": "value"}'`,
    );
  }
}

/** `arbeit call`: the stable JSON contract for scripts and hooks. */
export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  const [name, raw, ...extra] = argv;
  if (options.help) {
    if (name !== undefined && findTool(name)) write(1, toolHelp(name));
    else write(1, `${USAGE}\n${toolList()}\n`);
    return 0;
  }
  if (name === undefined)
    throw new UsageError("Name the tool to call: arbeit call <tool_name> ['<json>' | -].", toolList());
  const tool = findTool(name);
  if (!tool) throw unknownTool(name);
  if (extra.length > 0)
    throw new UsageError(
      extra[0]!.startsWith("-")
        ? `Unknown flag ${extra[0]}.${flagGuess(extra[0]!)}`
        : `Unexpected argument ${JSON.stringify(extra[0])}; pass all arguments as one JSON object.`,
    );
  let args: unknown;
  try {
    args = readArguments(raw);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return printEnvelope(failure(error), true);
  }
  // JSON in, JSON out: call is for scripts, so it prints JSON even on a terminal.
  return printEnvelope(await callTool(tool, args, options), true);
}
