import { commandLine, commandPath } from "./tool-commands.js";

/**
 * Advice in errors and warnings is written for agents, who call tools: "Re-parent with
 * arbeit_task_update {task_id: "tkt-...", parent_id: "tkt-..."}". A person at a terminal types
 * commands, so the text view turns each tool call into the command line that makes it. A call
 * with arguments becomes a whole command, in backticks, ready to paste; a bare tool name becomes
 * its command's words only, so that what follows it ("arbeit_query ready") still reads on.
 */

// Not after a word character: mcp__arbeit__task_get is a host's name for the tool, left as it is.
const TOOL_CALL = /(?<![\w])arbeit_[a-z]+(?:_[a-z]+)*(?![\w])/g;
// An aside giving CLI readers the command ("Call arbeit_init first (CLI: `arbeit init`)") would
// say it twice once the tool's name is the command.
const CLI_ASIDE = / \(CLI: `[^`]*`\)/g;

export function commandsForTools(advice: string): string {
  const text = advice.search(TOOL_CALL) === -1 ? advice : advice.replace(CLI_ASIDE, "");
  let out = "";
  let from = 0;
  for (const match of text.matchAll(TOOL_CALL)) {
    if (match.index < from) continue;
    const name = match[0];
    out += text.slice(from, match.index);
    from = match.index + name.length;
    const call = argumentsAt(text, from);
    if (call) {
      out += `\`${commandLine(name, call.args)}\``;
      from = call.end;
    } else out += ["arbeit", ...commandPath(name)].join(" ");
  }
  return out + text.slice(from);
}

/** The `{...}` that follows a tool name (after one space), read as the call's arguments. */
function argumentsAt(text: string, at: number): { args: Record<string, unknown>; end: number } | undefined {
  const start = text.startsWith(" {", at) ? at + 1 : text.startsWith("{", at) ? at : -1;
  if (start === -1) return undefined;
  const reader = new Reader(text, start);
  try {
    const args = reader.object();
    return { args, end: reader.at };
  } catch {
    // Not arguments after all (a brace in prose): the name alone is translated.
    return undefined;
  }
}

/**
 * The loose object notation advice is written in: JSON, but keys need no quotes, a value may be a
 * bare word (release, true, 3), and a key may stand alone for a value the reader supplies.
 */
class Reader {
  constructor(
    private readonly text: string,
    public at: number,
  ) {}

  object(): Record<string, unknown> {
    this.expect("{");
    const result: Record<string, unknown> = {};
    this.space();
    if (this.take("}")) return result;
    do {
      this.space();
      const key = this.peek() === '"' ? this.string() : this.word();
      this.space();
      result[key] = this.take(":") ? this.value() : undefined;
      this.space();
    } while (this.take(","));
    this.expect("}");
    return result;
  }

  private value(): unknown {
    this.space();
    const next = this.peek();
    if (next === "{") return this.object();
    if (next === '"') return this.string();
    if (next === "[") {
      this.expect("[");
      const items: unknown[] = [];
      this.space();
      if (this.take("]")) return items;
      do items.push(this.value());
      while (this.take(","));
      this.expect("]");
      return items;
    }
    const word = this.word();
    if (word === "true") return true;
    if (word === "false") return false;
    if (word === "null") return null;
    return /^-?\d+(\.\d+)?$/.test(word) ? Number(word) : word;
  }

  private string(): string {
    const match = /^"(?:[^"\\]|\\.)*"/.exec(this.text.slice(this.at));
    if (!match) throw new Error("unterminated string");
    this.at += match[0].length;
    this.space();
    return JSON.parse(match[0]) as string;
  }

  private word(): string {
    const match = /^[^\s,:{}[\]"]+/.exec(this.text.slice(this.at));
    if (!match) throw new Error("expected a word");
    this.at += match[0].length;
    this.space();
    return match[0];
  }

  private space(): void {
    while (this.text[this.at] === " ") this.at++;
  }

  private peek(): string | undefined {
    return this.text[this.at];
  }

  private take(char: string): boolean {
    this.space();
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  private expect(char: string): void {
    if (!this.take(char)) throw new Error(`expected ${char}`);
  }
}
