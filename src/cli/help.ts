import { TOOLS } from "../tools/catalogue.js";
import { EXTRA_COMMANDS } from "./extra-commands.js";
import { describeFlags, flagSpecs } from "./schema-flags.js";
import { groups, type ToolCommand, toolCommands } from "./tool-commands.js";

const GLOBAL = `Global options:
  --json              print the JSON envelope (the default when stdout is not a terminal)
  --db <file>         use this database file (env ARBEIT_DB) instead of the nearest .arbeit/arbeit.db
  --session <id>      the session work is linked to (env ARBEIT_SESSION; default "cli")
  --agent <name>      who is acting (env ARBEIT_AGENT; default "cli")
  --list <id>         task list to scope to (env ARBEIT_LIST)
  -h, --help          help for any command
  -v, --version       print the version
`;

function usageLine(command: ToolCommand): string {
  const words = command.positionals.map((p) => `[${p}]`);
  if (command.variadic) words.push(`[${command.variadic}...]`);
  return `arbeit ${command.path.join(" ")} ${words.join(" ")}`.trimEnd();
}

export async function generalHelp(): Promise<string> {
  const lines = [
    "arbeit — durable task memory for AI coding agents",
    "",
    "Usage: arbeit <command> [args] [--flags]",
    "",
    "Tool commands:",
  ];
  for (const [, commands] of groups(toolCommands(TOOLS))) {
    for (const command of commands) lines.push(`  ${usageLine(command).slice(7).padEnd(46)} ${command.tool.title}`);
  }
  lines.push("", "Other commands:");
  for (const [name, command] of Object.entries(EXTRA_COMMANDS)) lines.push(`  ${name.padEnd(46)} ${command.summary}`);
  lines.push(
    "",
    GLOBAL,
    "Exit codes: 0 success, 1 tool error (envelope on stdout), 2 usage error.",
    "Every command has --help. Docs: docs/cli.md",
    "",
  );
  return lines.join("\n");
}

export function groupHelp(group: string, commands: readonly ToolCommand[]): string {
  const lines = [`arbeit ${group} — subcommands:`, ""];
  for (const command of commands) lines.push(`  ${usageLine(command).padEnd(52)} ${command.tool.title}`);
  lines.push("", `Run \`arbeit ${group} <subcommand> --help\` for its flags.`, "");
  return lines.join("\n");
}

export function commandHelp(command: ToolCommand, extra = ""): string {
  const tool = command.tool;
  return [
    `Usage: ${usageLine(command)} [--flags]`,
    "",
    tool.description,
    "",
    `Runs the tool ${tool.name}; \`arbeit call ${tool.name} '<json>'\` takes the same arguments as JSON.`,
    "",
    "Flags:",
    describeFlags(flagSpecs(tool.input)),
    extra,
    "",
    GLOBAL,
  ].join("\n");
}
