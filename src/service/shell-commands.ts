/**
 * The simple commands a shell command line runs, each as its words with the quoting taken off:
 * enough to tell a line that runs a program from one that only mentions it, in a quoted string,
 * as an argument of `echo`, in a here-document's body or a comment. Not a shell: it does not
 * expand anything; a command run inside a quoted string is seen only through `commandsRun`,
 * which looks into the script a shell is handed with `-c`.
 */
export function simpleCommands(line: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  /** Here-document delimiters whose bodies start at the next newline. */
  let heredocs: Array<{ delimiter: string; tabs: boolean }> = [];
  let expectDelimiter: { tabs: boolean } | undefined;

  const endWord = () => {
    if (!inWord) return;
    if (expectDelimiter) {
      heredocs.push({ delimiter: word, tabs: expectDelimiter.tabs });
      expectDelimiter = undefined;
    } else words.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };

  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === "'") {
      const end = line.indexOf("'", i + 1);
      const stop = end === -1 ? line.length : end;
      word += line.slice(i + 1, stop);
      inWord = true;
      i = stop;
    } else if (char === '"') {
      inWord = true;
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\" && '$`"\\\n'.includes(line[i + 1] ?? "-")) i++;
        word += line[i];
      }
    } else if (char === "\\") {
      if (line[i + 1] === "\n") i++;
      else if (i + 1 < line.length) {
        word += line[++i];
        inWord = true;
      }
    } else if (char === "#" && !inWord) {
      while (i + 1 < line.length && line[i + 1] !== "\n") i++;
    } else if (char === "<" && line[i + 1] === "<" && line[i + 2] !== "<") {
      endWord();
      const tabs = line[i + 2] === "-";
      i += tabs ? 2 : 1;
      expectDelimiter = { tabs };
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
    } else if (";&|()`".includes(char) && !(char === "&" && (word.endsWith(">") || word.endsWith("<")))) {
      endCommand();
    } else if (char === " " || char === "\t") {
      endWord();
    } else {
      word += char;
      inWord = true;
    }
  }
  endCommand();
  return commands;
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
function shellScript(args: string[]): string | undefined {
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
