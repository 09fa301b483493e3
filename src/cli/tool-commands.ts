import type { ToolDef } from "../tools/define.js";

/**
 * Friendly subcommands mirror the tool catalogue: arbeit_task_create is `arbeit task create`,
 * arbeit_query is `arbeit query`. Only the words an argument may be given as are listed here;
 * every flag comes from the tool's schema, so a new tool appears in the CLI by itself.
 */
export interface ToolCommand {
  path: string[];
  tool: ToolDef;
  positionals: string[];
  variadic?: string;
  aliases?: string[];
  example?: string;
}

type Words = Omit<ToolCommand, "path" | "tool">;

const WORDS: Record<string, Words> = {
  arbeit_task_create: {
    positionals: ["title"],
    example: 'arbeit task create "Fix login timeout" --type bug --priority 1 --intent "Users are logged out early"',
  },
  arbeit_task_get: {
    positionals: ["task_id"],
    example: "arbeit task get tkt-a7f3b2c1 --include context,progress_summary,files,recent_events",
  },
  arbeit_task_update: {
    positionals: ["task_id"],
    example: 'arbeit task update tkt-a7f3b2c1 --status completed --description "..." --plan "..."',
  },
  arbeit_task_delete: { positionals: ["task_id"] },
  arbeit_task_start_work: { positionals: ["task_id"], aliases: ["start"], example: "arbeit task start tkt-a7f3b2c1" },
  arbeit_task_stop_work: { positionals: ["task_id"], aliases: ["stop"], example: "arbeit task stop tkt-a7f3b2c1" },
  arbeit_context_add: {
    positionals: ["task_id", "type", "content"],
    example: 'arbeit context add tkt-a7f3b2c1 decision "Store the last-activity time in localStorage"',
  },
  arbeit_progress_add: {
    positionals: ["task_id"],
    variadic: "items",
    example: 'arbeit progress add tkt-a7f3b2c1 "Write the hook" "Add tests"',
  },
  arbeit_progress_complete: {
    positionals: [],
    variadic: "item_ids",
    example: "arbeit progress complete prg-1a2b3c4d prg-5e6f7a8b",
  },
  arbeit_relationship: {
    positionals: ["action", "from_task_id", "type", "to_task_id"],
    example: "arbeit relationship add tkt-a7f3b2c1 blocks tkt-b8e4c3d2",
  },
  arbeit_query: { positionals: ["query"], example: "arbeit query ready --limit 5" },
  arbeit_task_claim: { positionals: ["task_id"], example: "arbeit task claim --next --agent builder-1" },
  arbeit_resume: { positionals: [], example: "arbeit resume --agent builder-1 --peek" },
  arbeit_memory: { positionals: ["action", "key", "value"], example: 'arbeit memory set test-command "npm test"' },
};

export function commandPath(toolName: string): string[] {
  const bare = toolName.replace(/^arbeit_/, "");
  const split = bare.indexOf("_");
  if (split === -1) return [bare];
  return [bare.slice(0, split), bare.slice(split + 1).replaceAll("_", "-")];
}

/** A parameter's flag: parent_id is --parent-id. */
export function flagName(key: string): string {
  return `--${key.replaceAll("_", "-")}`;
}

/** A value as one shell word: bare when nothing in it needs quoting. */
function shellWord(value: unknown): string {
  const text = Array.isArray(value) ? value.join(",") : String(value);
  return /^[\w.,:/@=+-]+$/.test(text) ? text : JSON.stringify(text);
}

/**
 * The command line that makes a tool call: its command, the positionals it was given in order
 * (up to the first one missing), then the rest as flags. A key without a value (undefined) is a
 * blank for the reader to fill, shown as <key>. arbeit_query's params are the query's own flags.
 */
export function commandLine(toolName: string, args: Record<string, unknown>): string {
  const words = ["arbeit", ...commandPath(toolName)];
  const rest = new Map(Object.entries(args));
  const params = rest.get("params");
  if (toolName === "arbeit_query" && typeof params === "object" && params !== null && !Array.isArray(params)) {
    rest.delete("params");
    for (const [key, value] of Object.entries(params)) rest.set(key, value);
  }
  const value = (key: string, given: unknown) => (given === undefined ? `<${key}>` : shellWord(given));
  const { positionals = [], variadic } = WORDS[toolName] ?? {};
  const given = positionals.findIndex((key) => !rest.has(key));
  for (const key of given === -1 ? positionals : positionals.slice(0, given)) {
    words.push(value(key, rest.get(key)));
    rest.delete(key);
  }
  if (given === -1 && variadic && rest.has(variadic)) {
    const items = rest.get(variadic);
    words.push(...(Array.isArray(items) ? items.map(shellWord) : [value(variadic, items)]));
    rest.delete(variadic);
  }
  for (const [key, flagValue] of rest) {
    if (flagValue === true) words.push(flagName(key));
    else words.push(flagName(key), value(key, flagValue));
  }
  return words.join(" ");
}

export function toolCommands(tools: readonly ToolDef[]): ToolCommand[] {
  return tools.map((tool) => ({ path: commandPath(tool.name), tool, positionals: [], ...WORDS[tool.name] }));
}

/** Every way of naming a command: its path, then the path with each alias as the last word. */
export function commandNames(command: ToolCommand): string[][] {
  return [command.path, ...(command.aliases ?? []).map((alias) => [...command.path.slice(0, -1), alias])];
}

/** Finds the command `words` name, longest path first; returns it and the words left over. */
export function resolveCommand(
  commands: readonly ToolCommand[],
  words: readonly string[],
): { command: ToolCommand; rest: string[] } | undefined {
  const names = commands
    .flatMap((command) => commandNames(command).map((path) => ({ command, path })))
    .sort((a, b) => b.path.length - a.path.length);
  for (const { command, path } of names) {
    if (path.length <= words.length && path.every((word, i) => words[i] === word)) {
      return { command, rest: words.slice(path.length) };
    }
  }
  return undefined;
}

export function groups(commands: readonly ToolCommand[]): Map<string, ToolCommand[]> {
  const byGroup = new Map<string, ToolCommand[]>();
  for (const command of commands) {
    const group = command.path[0]!;
    byGroup.set(group, [...(byGroup.get(group) ?? []), command]);
  }
  return byGroup;
}
