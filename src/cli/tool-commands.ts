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
}

const WORDS: Record<string, { positionals: string[]; variadic?: string; aliases?: string[] }> = {
  arbeit_task_create: { positionals: ["title"] },
  arbeit_task_get: { positionals: ["task_id"] },
  arbeit_task_update: { positionals: ["task_id"] },
  arbeit_task_delete: { positionals: ["task_id"] },
  arbeit_task_start_work: { positionals: ["task_id"], aliases: ["start"] },
  arbeit_task_stop_work: { positionals: ["task_id"], aliases: ["stop"] },
  arbeit_context_add: { positionals: ["task_id", "type", "content"] },
  arbeit_progress_add: { positionals: ["task_id"], variadic: "items" },
  arbeit_progress_complete: { positionals: [], variadic: "item_ids" },
  arbeit_relationship: { positionals: ["action", "from_task_id", "type", "to_task_id"] },
  arbeit_query: { positionals: ["query"] },
};

export function commandPath(toolName: string): string[] {
  const bare = toolName.replace(/^arbeit_/, "");
  const split = bare.indexOf("_");
  if (split === -1) return [bare];
  return [bare.slice(0, split), bare.slice(split + 1).replaceAll("_", "-")];
}

export function toolCommands(tools: readonly ToolDef[]): ToolCommand[] {
  return tools.map((tool) => ({ path: commandPath(tool.name), tool, positionals: [], ...WORDS[tool.name] }));
}

/** Finds the command `words` name, longest path first; returns it and the words left over. */
export function resolveCommand(
  commands: readonly ToolCommand[],
  words: readonly string[],
): { command: ToolCommand; rest: string[] } | undefined {
  for (const command of commands) {
    const names = [command.path, ...(command.aliases ?? []).map((alias) => [...command.path.slice(0, -1), alias])];
    for (const path of names) {
      if (path.length <= words.length && path.every((word, i) => words[i] === word)) {
        return { command, rest: words.slice(path.length) };
      }
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
