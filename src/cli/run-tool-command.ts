import { QUERIES, type QueryName } from "../service/queries.js";
import { TOOLS } from "../tools/catalogue.js";
import { EXTRA_COMMANDS } from "./extra-commands.js";
import type { GlobalOptions } from "./global-options.js";
import { commandHelp, groupHelp, oneQueryHelp, queryHelp } from "./help.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { flagSpecs, parseFlags } from "./schema-flags.js";
import { closest } from "./suggest.js";
import { callTool } from "./tool-call.js";
import { commandNames, groups, resolveCommand, type ToolCommand, toolCommands } from "./tool-commands.js";
import { inCommand, UsageError } from "./usage-error.js";

function isQuery(name: string | undefined): name is QueryName {
  return name !== undefined && Object.hasOwn(QUERIES, name);
}

/** `arbeit query <name> --flag value`: the flags are the named query's params. */
function queryArgs(rest: string[]): Record<string, unknown> {
  const [name, ...flags] = rest;
  if (name === undefined || name.startsWith("-"))
    throw new UsageError(
      "Name the query: arbeit query <name> [--param value].",
      `Queries: ${Object.keys(QUERIES).join(", ")}`,
    );
  // An unknown name goes to the tool, which answers UNKNOWN_QUERY with the list of names.
  if (!isQuery(name)) return { query: name };
  return {
    query: name,
    params: inCommand(`query ${name}`, () => parseFlags(flags, flagSpecs(QUERIES[name].params), [])),
  };
}

/** "Did you mean ...?" for a command line that names no command. */
function suggestion(words: readonly string[], commands: readonly ToolCommand[]): string | undefined {
  const phrases = [
    ...commands.flatMap((command) => commandNames(command).map((name) => name.join(" "))),
    ...Object.keys(EXTRA_COMMANDS),
  ];
  const twoWords = closest(
    words.slice(0, 2).join(" "),
    phrases.filter((phrase) => phrase.includes(" ")),
  );
  if (twoWords && words.length > 1) return twoWords;
  // `arbeit create` -> `task create`: the word is a subcommand of some group.
  const endings = phrases.filter((phrase) => phrase.endsWith(` ${words[0]}`));
  if (endings.length > 0) return endings.join(" or ");
  return closest(words[0]!, phrases.filter((phrase) => !phrase.includes(" ")).concat([...groups(commands).keys()]));
}

export async function runToolCommand(words: string[], options: GlobalOptions): Promise<number> {
  const commands = toolCommands(TOOLS);
  const found = resolveCommand(commands, words);
  if (!found) {
    const group = groups(commands).get(words[0]!);
    if (group && options.help) {
      write(1, groupHelp(words[0]!, group));
      return 0;
    }
    if (group && words.length === 1)
      throw new UsageError(
        `Name a subcommand of ${words[0]}.`,
        groupHelp(words[0]!, group, false).trimEnd(),
        `${words[0]} <subcommand>`,
      );
    const guess = suggestion(words, commands);
    throw new UsageError(
      `Unknown command ${JSON.stringify(words.join(" "))}.${guess ? ` Did you mean ${guess}?` : ""}`,
      group ? groupHelp(words[0]!, group, false).trimEnd() : undefined,
      group ? `${words[0]} <subcommand>` : undefined,
    );
  }
  const { command, rest } = found;
  const name = command.path.join(" ");
  const query = command.tool.name === "arbeit_query";
  if (options.help) {
    if (query) write(1, isQuery(rest[0]) ? oneQueryHelp(rest[0]) : queryHelp(command));
    else write(1, commandHelp(command));
    return 0;
  }
  if (command.tool.name === "arbeit_init" && rest.some((word) => word === "--server" || word.startsWith("--server="))) {
    const { initServer } = await import("./init-server.js");
    return initServer(rest, options);
  }
  const args = inCommand(name, () =>
    query ? queryArgs(rest) : parseFlags(rest, flagSpecs(command.tool.input), command.positionals, command.variadic),
  );
  return printEnvelope(await callTool(command.tool, args, options), wantsJson(options.json));
}
