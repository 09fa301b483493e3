import type { z } from "zod";
import { QUERIES } from "../service/queries.js";
import { TOOLS } from "../tools/catalogue.js";
import { EXTRA_COMMANDS } from "./extra-commands.js";
import { describeFlags, flagSpecs } from "./schema-flags.js";
import { commandNames, flagName, groups, type ToolCommand, toolCommands } from "./tool-commands.js";

/** Help text for every level: `arbeit --help`, `arbeit task --help`, `arbeit task create --help`. */

export const GLOBAL_OPTIONS = `Global options (anywhere on the line):
  --json            print the JSON envelope (the default when stdout is not a terminal)
  --db <file>       use this database file instead of the nearest .arbeit/arbeit.db (env ARBEIT_DB)
  --session <id>    the session acting: holds claims and work (env ARBEIT_SESSION; default "agent:<agent>")
  --agent <name>    who is acting, recorded on events (env ARBEIT_AGENT; default "cli")
  --list <id>       task list to scope reads and creates to (env ARBEIT_LIST)
  -h, --help        help for any command
  -v, --version     print the version
`;

const EXIT_CODES = "Exit codes: 0 success; 1 tool error (the envelope is still printed); 2 usage error (on stderr).";
const COLUMN = 40;

function row(left: string, right: string, column = COLUMN): string {
  const head = `  ${left}`;
  return head.length < column ? `${head.padEnd(column)}${right}` : `${head}\n${" ".repeat(column)}${right}`;
}

/**
 * Which of the command's words the tool requires. Only the words' own fields are converted:
 * converting every field of every tool's schema was most of what `arbeit --help` cost.
 */
function requiredWords(command: ToolCommand): Set<string> {
  const words = [...command.positionals, ...(command.variadic ? [command.variadic] : [])];
  if (words.length === 0) return new Set();
  const mask: Record<string, true> = Object.fromEntries(words.map((word) => [word, true]));
  const fields = command.tool.input.pick(mask as Parameters<z.ZodObject["pick"]>[0]);
  return new Set(flagSpecs(fields).flatMap((spec) => (spec.required ? [spec.key] : [])));
}

/** `task create <title>`: required words in <>, optional ones in []. */
export function usageLine(command: ToolCommand, name = command.path): string {
  const needed = requiredWords(command);
  const words = command.positionals.map((p) => (needed.has(p) ? `<${p}>` : `[${p}]`));
  if (command.variadic)
    words.push(needed.has(command.variadic) ? `<${command.variadic}...>` : `[${command.variadic}...]`);
  return [...name, ...words].join(" ");
}

export function generalHelp(): string {
  const lines = [
    "arbeit — durable task memory for AI coding agents",
    "",
    "Usage: arbeit <command> [arguments] [--flags]",
    "",
    "Tool commands (each runs one arbeit_* tool; see `arbeit <command> --help` for its flags):",
  ];
  for (const [, commands] of groups(toolCommands(TOOLS))) {
    for (const command of commands) {
      // A tool with a command of its own (arbeit batch) is listed there.
      if (command.path.length === 1 && EXTRA_COMMANDS[command.path[0]!]) continue;
      lines.push(row(usageLine(command), command.tool.title));
    }
  }
  lines.push("", "Other commands:");
  for (const [name, command] of Object.entries(EXTRA_COMMANDS)) lines.push(row(name, command.summary));
  lines.push(row("help [command]", "Help for a command (same as <command> --help)"));
  lines.push(
    "",
    GLOBAL_OPTIONS,
    "Examples:",
    "  arbeit init",
    '  arbeit task create "Fix login timeout" --type bug',
    "  arbeit task start tkt-a7f3b2c1",
    "  arbeit query ready --limit 5",
    `  arbeit call arbeit_task_get '{"task_id": "tkt-a7f3b2c1", "include": ["context", "progress_summary"]}'`,
    "",
    EXIT_CODES,
    "Output: JSON when stdout is not a terminal (or with --json), readable text on a terminal.",
    "",
  );
  return lines.join("\n");
}

/** `arbeit task --help`; without the footer, the hint of `arbeit task` alone. */
export function groupHelp(group: string, commands: readonly ToolCommand[], footer = true): string {
  const lines = [`Usage: arbeit ${group} <subcommand> [arguments] [--flags]`, "", "Subcommands:"];
  for (const command of commands) {
    const aliases = commandNames(command)
      .slice(1)
      .map((name) => name.at(-1));
    const title = aliases.length > 0 ? `${command.tool.title} (alias: ${aliases.join(", ")})` : command.tool.title;
    lines.push(row(usageLine(command), title, 44));
  }
  if (footer) lines.push("", `Run \`arbeit ${group} <subcommand> --help\` for its flags.`);
  return `${lines.join("\n")}\n`;
}

export function commandHelp(command: ToolCommand): string {
  const tool = command.tool;
  const lines = [`Usage: arbeit ${usageLine(command)} [--flags]`, "", tool.description, "", "Flags:"];
  // The one flag with an environment form of its own: hooks and scripts pass their key that way.
  const specs = flagSpecs(tool.input).map((spec) =>
    spec.key === "request_id" ? { ...spec, description: `${spec.description} (env ARBEIT_REQUEST_ID)` } : spec,
  );
  lines.push(describeFlags(specs));
  // Not a tool argument: the CLI records the service itself (src/cli/init-server.ts).
  if (tool.name === "arbeit_init")
    lines.push(
      "  --server <url>                  Use the team's `arbeit serve` service: record its URL in .arbeit/service.json, to commit; make no database (docs/team.md)",
      "  --ca <file>                     With --server: the PEM file of the CA that signed the service's certificate, recorded beside the URL",
    );
  const words = [...command.positionals, ...(command.variadic ? [command.variadic] : [])];
  if (words.length > 0) {
    const flags = words.map(flagName);
    lines.push("", `${words.map((word) => `<${word}>`).join(" ")} may also be given as ${flags.join(" ")}.`);
  }
  if (command.example) lines.push("", "Example:", `  ${command.example}`);
  lines.push("", `Same as: arbeit call ${tool.name} '<json arguments>'`, "", GLOBAL_OPTIONS);
  return lines.join("\n");
}

export function queryHelp(command: ToolCommand): string {
  const lines = [
    "Usage: arbeit query <name> [--param value ...]",
    "",
    command.tool.description,
    "",
    "Queries (each one's flags become its params):",
  ];
  for (const [name, def] of Object.entries(QUERIES)) {
    lines.push(row(name, def.summary, 20));
    const flags = flagSpecs(def.params).map((spec) => (spec.required ? spec.flag : `[${spec.flag}]`));
    if (flags.length > 0) lines.push(`${" ".repeat(20)}${flags.join(" ")}`);
  }
  lines.push(
    "",
    "Run `arbeit query <name> --help` for one query's flags.",
    "",
    "Example:",
    "  arbeit query tasks --status open,in_progress --parent-id null",
    "",
    `Same as: arbeit call ${command.tool.name} '{"query": "<name>", "params": {...}}'`,
    "",
    GLOBAL_OPTIONS,
  );
  return lines.join("\n");
}

export function oneQueryHelp(name: keyof typeof QUERIES): string {
  const def = QUERIES[name];
  return [
    `Usage: arbeit query ${name} [--flags]`,
    "",
    def.summary,
    "",
    "Flags:",
    describeFlags(flagSpecs(def.params)),
    "",
    `Same as: arbeit call arbeit_query '{"query": "${name}", "params": {...}}'`,
    "",
    GLOBAL_OPTIONS,
  ].join("\n");
}
