import { QUERIES, type QueryName } from "../service/queries.js";
import { TOOLS } from "../tools/catalogue.js";
import { invokeTool } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { commandHelp, groupHelp } from "./help.js";
import { printEnvelope, wantsJson } from "./output.js";
import { flagSpecs, parseFlags } from "./schema-flags.js";
import { groups, resolveCommand, toolCommands } from "./tool-commands.js";
import { cliToolContext } from "./tool-context.js";
import { UsageError } from "./usage-error.js";

function queryHelp(): string {
  const lines = ["", "Queries (their flags become params):"];
  for (const [name, def] of Object.entries(QUERIES)) {
    const flags = flagSpecs(def.params).map((spec) => spec.flag + (spec.required ? "" : "?"));
    lines.push(`  ${name.padEnd(16)} ${def.summary}${flags.length ? `  [${flags.join(" ")}]` : ""}`);
  }
  return lines.join("\n");
}

/** `arbeit query <name> --flag value`: the flags are the named query's params. */
function queryArgs(rest: string[]): Record<string, unknown> {
  const [name, ...flags] = rest;
  if (name === undefined || name.startsWith("--"))
    throw new UsageError("Name the query: arbeit query <name> [--param value].", queryHelp());
  const def = QUERIES[name as QueryName];
  if (!def) return { query: name };
  return { query: name, params: parseFlags(flags, flagSpecs(def.params), []) };
}

export async function runToolCommand(words: string[], options: GlobalOptions): Promise<number> {
  const commands = toolCommands(TOOLS);
  const found = resolveCommand(commands, words);
  if (!found) {
    const group = groups(commands).get(words[0]!);
    if (group && (options.help || words.length === 1)) {
      process.stdout.write(groupHelp(words[0]!, group));
      return options.help ? 0 : 2;
    }
    throw new UsageError(`Unknown command ${JSON.stringify(words.join(" "))}.`);
  }
  const { command, rest } = found;
  const isQuery = command.tool.name === "arbeit_query";
  if (options.help) {
    process.stdout.write(isQuery ? `${commandHelp(command, queryHelp())}` : commandHelp(command));
    return 0;
  }
  const args = isQuery
    ? queryArgs(rest)
    : parseFlags(rest, flagSpecs(command.tool.input), command.positionals, command.variadic);
  const ctx = cliToolContext(options);
  try {
    return printEnvelope(await invokeTool(command.tool, args, ctx), wantsJson(options.json));
  } finally {
    await ctx.close();
  }
}
