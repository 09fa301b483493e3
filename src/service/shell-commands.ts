/**
 * A shell command line read as the simple commands it runs: each one's words with the quoting
 * taken off, its redirections apart, and the subshells it runs in. Enough to tell a line that runs
 * a program from one that only mentions it (in a quoted string, as an argument of `echo`, in a
 * here-document's body or a comment), and to see which files a command names. Not a shell: it
 * expands nothing. A word holding an expansion (`$X`, `$(...)`, a backquote, a leading `~`)
 * carries UNKNOWN, since only the running shell knows its value; the commands inside `$(...)` and
 * backquotes are read as commands of their own, since the shell runs them.
 */
export interface ShellCommand {
  words: string[];
  /** `>`, `>>`, `>|`, `&>`, `2>`, `<`, `<>`, `>&`... with the word after them. */
  redirects: Array<{ op: string; target: string }>;
  /** The subshells (`( ... )`, `$( ... )`) it runs in, outermost first: a `cd` there ends with them. */
  scopes: number[];
}

/** Stands in a word for what only the running shell knows. */
export const UNKNOWN = "\0";

export function shellCommands(line: string): ShellCommand[] {
  const out: ShellCommand[] = [];
  readLine(line, [], { next: 1 }, out);
  return out;
}

/** The words of each simple command a line runs. */
export function simpleCommands(line: string): string[][] {
  return shellCommands(line).map((command) => command.words);
}

/** Where the `)` closing the `(` at `open` is (quotes and nested parentheses skipped), or the end. */
function closing(line: string, open: number): number {
  let depth = 0;
  for (let i = open; i < line.length; i++) {
    const char = line[i]!;
    if (char === "\\") i++;
    else if (char === "'") i = until(line, i + 1, "'");
    else if (char === '"' || char === "`") i = until(line, i + 1, char);
    else if (char === "(") depth++;
    else if (char === ")" && --depth === 0) return i;
  }
  return line.length;
}

/** Where the next `quote` not escaped by a backslash is (for `'`, the next at all), or the end. */
function until(line: string, from: number, quote: string): number {
  for (let i = from; i < line.length; i++) {
    if (line[i] === "\\" && quote !== "'") i++;
    else if (line[i] === quote) return i;
  }
  return line.length;
}

function readLine(line: string, outer: number[], ids: { next: number }, out: ShellCommand[]): void {
  const scopes = [...outer];
  let words: string[] = [];
  let redirects: ShellCommand["redirects"] = [];
  let word = "";
  let inWord = false;
  let redirect: string | undefined;
  /** Here-document delimiters whose bodies start at the next newline. */
  let heredocs: Array<{ delimiter: string; tabs: boolean }> = [];
  let expectDelimiter: { tabs: boolean } | undefined;

  const endWord = () => {
    if (!inWord) return;
    if (expectDelimiter) {
      heredocs.push({ delimiter: word, tabs: expectDelimiter.tabs });
      expectDelimiter = undefined;
    } else if (redirect !== undefined) {
      redirects.push({ op: redirect, target: word });
      redirect = undefined;
    } else words.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0 || redirects.length > 0) out.push({ words, redirects, scopes: [...scopes] });
    words = [];
    redirects = [];
  };
  /** `$(...)` or a backquote: its commands run in a subshell of their own; the word is unknown. */
  const substitution = (inner: string) => {
    readLine(inner, [...scopes, ids.next++], ids, out);
    word += UNKNOWN;
    inWord = true;
  };
  /** `$...` at `i`: the index of its last character. */
  const expansion = (i: number): number => {
    const next = line[i + 1];
    if (next === "(") {
      const end = closing(line, i + 1);
      if (line[i + 2] === "(") word += UNKNOWN;
      else substitution(line.slice(i + 2, end));
      inWord = true;
      return end;
    }
    word += UNKNOWN;
    inWord = true;
    if (next === "{") return until(line, i + 2, "}");
    if (next === "'") return until(line, i + 2, "'");
    const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(line.slice(i + 1));
    return i + (name ? name[0].length : 0);
  };

  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === "'") {
      const end = until(line, i + 1, "'");
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (char === '"') {
      inWord = true;
      for (i++; i < line.length && line[i] !== '"'; i++) {
        const inner = line[i]!;
        if (inner === "\\" && '$`"\\\n'.includes(line[i + 1] ?? "-")) word += line[++i];
        else if (inner === "$" && /[A-Za-z_0-9@*#?!{(-]/.test(line[i + 1] ?? "")) i = expansion(i);
        else if (inner === "`") {
          const end = until(line, i + 1, "`");
          substitution(line.slice(i + 1, end));
          i = end;
        } else word += inner;
      }
    } else if (char === "\\") {
      if (line[i + 1] === "\n") i++;
      else if (i + 1 < line.length) {
        word += line[++i];
        inWord = true;
      }
    } else if (char === "$" && /[A-Za-z_0-9@*#?!{('-]/.test(line[i + 1] ?? "")) {
      i = expansion(i);
    } else if (char === "`") {
      const end = until(line, i + 1, "`");
      substitution(line.slice(i + 1, end));
      i = end;
    } else if (char === "~" && !inWord) {
      word += UNKNOWN;
      inWord = true;
    } else if (char === "#" && !inWord) {
      while (i + 1 < line.length && line[i + 1] !== "\n") i++;
    } else if (char === "<" && line[i + 1] === "<" && line[i + 2] !== "<") {
      endWord();
      const tabs = line[i + 2] === "-";
      i += tabs ? 2 : 1;
      expectDelimiter = { tabs };
    } else if (char === ">" || char === "<" || (char === "&" && line[i + 1] === ">")) {
      // `2>file`: digits right before the operator name the descriptor, not a word.
      const fd = inWord && /^\d+$/.test(word) ? word : "";
      if (fd) {
        word = "";
        inWord = false;
      } else endWord();
      let op = char;
      if (char === "&") op += line[++i];
      if (line[i + 1] === ">" || line[i + 1] === "|" || line[i + 1] === "&" || (char === "<" && line[i + 1] === "<"))
        op += line[++i];
      if (op === "<<" && line[i + 1] === "<") op += line[++i];
      redirect = fd + op;
    } else if (char === "\n") {
      endCommand();
      // A here-document's body is data, not commands: skip to the line holding its delimiter.
      for (const { delimiter, tabs } of heredocs) {
        let next = line.indexOf("\n", i + 1);
        for (;;) {
          const body = line.slice(i + 1, next === -1 ? line.length : next);
          i = next === -1 ? line.length : next;
          if ((tabs ? body.replace(/^\t+/, "") : body) === delimiter || next === -1) break;
          next = line.indexOf("\n", i + 1);
        }
      }
      heredocs = [];
    } else if (char === "(") {
      endCommand();
      scopes.push(ids.next++);
    } else if (char === ")") {
      endCommand();
      if (scopes.length > outer.length) scopes.pop();
    } else if (char === ";" || char === "&" || char === "|") {
      endCommand();
    } else if (char === " " || char === "\t") {
      endWord();
    } else {
      word += char;
      inWord = true;
    }
  }
  endCommand();
}

/** Words before the program that do not change which program runs. */
const PREFIXES = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "time",
  "command",
  "exec",
  "nohup",
  "env",
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** The program a simple command runs and its arguments, past assignments, `env`, `exec` and the like. */
export function programOf(words: string[]): { program: string; args: string[] } | undefined {
  let at = 0;
  while (at < words.length && (PREFIXES.has(words[at]!) || ASSIGNMENT.test(words[at]!))) at++;
  const program = words[at];
  return program === undefined ? undefined : { program, args: words.slice(at + 1) };
}

/** Shells whose `-c` takes a script: what they run is looked into as a line of its own. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh"]);
/** `sh -c 'bash -c "..."'` nests; deeper than this is not followed (nothing real goes further). */
const MAX_SHELL_DEPTH = 4;

/**
 * The simple commands a line runs, those a shell runs from `-c '<script>'` included (`sh -c "git
 * commit -m x"`, `bash -lc ...`): the shell's own words, then the script's commands.
 */
export function commandsRun(line: string, depth = 0): string[][] {
  const out: string[][] = [];
  for (const words of simpleCommands(line)) {
    out.push(words);
    if (depth >= MAX_SHELL_DEPTH) continue;
    const run = programOf(words);
    if (!run || !SHELLS.has(run.program.slice(run.program.lastIndexOf("/") + 1))) continue;
    const script = shellScript(run.args);
    if (script !== undefined) out.push(...commandsRun(script, depth + 1));
  }
  return out;
}

/** The script of a shell's arguments: the first word after the options, when an option holds `c`. */
export function shellScript(args: string[]): string | undefined {
  let hasC = false;
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!;
    if (arg === "--") return hasC ? args[at + 1] : undefined;
    // `-o pipefail`, `+O extglob`: the option's value is the next word.
    if (/^[-+][oO]$/.test(arg)) {
      at++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(arg)) {
      if (arg.startsWith("-") && arg.includes("c")) hasC = true;
      continue;
    }
    return hasC ? arg : undefined;
  }
  return undefined;
}
