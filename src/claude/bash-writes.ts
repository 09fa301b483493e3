/**
 * The files a shell command plainly writes, as far as a cheap reading of its text can tell, so
 * that a Bash call is held to file reservations like an Edit. It reads:
 *
 * - output redirections `>`, `>>`, `>|`, `&>`, `N>` to a file (not `/dev/...`, not `>&N`);
 * - `tee [-a] FILE...`;
 * - `sed -i ... FILE...` (the files after the script, or every operand when `-e`/`-f` gives it);
 * - `mv SRC... DEST` (every operand: the sources go away), `cp SRC... DEST` (the target), with
 *   `-t DIR` honoured;
 * - `rm`, `touch`, `truncate` operands.
 *
 * Commands are split at `;`, `&&`, `||`, `|`, `&` and newlines; words are split as a shell would
 * for plain and quoted words. Anything it cannot read plainly is left alone: words holding `$`,
 * a backtick or `$(...)`, here-documents' bodies, commands run through `sh -c`, `xargs`, `find
 * -exec`, interpreters (`python -c`, `node -e`), scripts, `git checkout`, and other programs that
 * write files. A wildcard operand (`rm src/*.ts`) is kept as a pattern.
 */

const WRITERS = new Set(["tee", "sed", "mv", "cp", "rm", "touch", "truncate"]);
/** Words that run the next word as a command. */
const PREFIXES = new Set(["sudo", "command", "builtin", "exec", "nice", "nohup", "time", "env"]);

/** Marks a word whose value is only known when the shell runs (`$X`, `$(...)`): never a path. */
const DYNAMIC = "\0";

/** The command's words, or undefined when a quote is left open. */
function words(segment: string): string[] | undefined {
  const out: string[] = [];
  let current = "";
  let inWord = false;
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === "'") {
      const end = segment.indexOf("'", i + 1);
      if (end < 0) return undefined;
      current += segment.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      const end = segment.indexOf('"', i + 1);
      if (end < 0) return undefined;
      const inner = segment.slice(i + 1, end);
      current += /[$`\\]/.test(inner) ? DYNAMIC : inner;
      inWord = true;
      i = end;
    } else if (c === "\\") {
      current += segment[i + 1] ?? "";
      inWord = true;
      i++;
    } else if (c === "$" || c === "`") {
      current += DYNAMIC;
      inWord = true;
    } else if (c === " " || c === "\t") {
      if (inWord) out.push(current);
      current = "";
      inWord = false;
    } else if (c === ">" || c === "<") {
      // A redirection operator is a word of its own: `a>b` is `a`, `>`, `b`; `2>` and `&>` stay one.
      let op = inWord && /^(\d+|&)$/.test(current) ? current : "";
      if (inWord && op === "") out.push(current);
      op += c;
      if (segment[i + 1] === ">" || segment[i + 1] === "|" || segment[i + 1] === "&") op += segment[++i];
      out.push(op);
      current = "";
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) out.push(current);
  return out;
}

/** `cmd1 && cmd2; cmd3 | cmd4`: the commands, here-document bodies left out. */
function segments(command: string): string[] {
  const lines: string[] = [];
  let heredoc: string | undefined;
  for (const line of command.split("\n")) {
    if (heredoc !== undefined) {
      if (line.trim() === heredoc) heredoc = undefined;
      continue;
    }
    const marker = /<<-?\s*['"]?(\w+)['"]?/.exec(line);
    if (marker) heredoc = marker[1];
    lines.push(marker ? line.replace(/<<-?\s*['"]?\w+['"]?/, "") : line);
  }
  // Operators inside quotes are rare in commands that write files; a split there at worst reads less.
  return lines.join("\n").split(/&&|\|\||[;\n]|(?<!>)\|(?!\|)|(?<![<>&])&(?![>&])/);
}

const isDevice = (path: string) => path === "/dev/null" || path.startsWith("/dev/");
const operands = (args: string[]) => {
  const out: string[] = [];
  let options = true;
  for (const arg of args) {
    if (options && arg === "--") options = false;
    else if (options && arg.startsWith("-") && arg !== "-") continue;
    else out.push(arg);
  }
  return out;
};

function writtenBy(program: string, args: string[]): string[] {
  switch (program) {
    case "tee":
    case "rm":
    case "touch":
      return operands(args);
    case "truncate": {
      // `truncate -s SIZE FILE`: the size is an option's value.
      const files: string[] = [];
      for (let i = 0; i < args.length; i++) {
        if (args[i] === "-s" || args[i] === "-r" || args[i] === "--size" || args[i] === "--reference") i++;
        else if (!args[i]!.startsWith("-")) files.push(args[i]!);
      }
      return files;
    }
    case "sed": {
      if (!args.some((arg) => /^-[a-zA-Z]*i/.test(arg) || arg.startsWith("--in-place"))) return [];
      const files: string[] = [];
      let script = false;
      for (let i = 0; i < args.length; i++) {
        const arg = args[i]!;
        if (arg === "-e" || arg === "-f" || arg === "--expression" || arg === "--file") {
          script = true;
          i++;
        } else if (arg.startsWith("-")) continue;
        else files.push(arg);
      }
      // Without -e/-f, the first operand is the script.
      return script ? files : files.slice(1);
    }
    case "mv":
    case "cp": {
      const target = args.findIndex((arg) => arg === "-t" || arg === "--target-directory");
      if (target >= 0) {
        const dir = args[target + 1];
        const rest = operands(args.filter((_, i) => i !== target && i !== target + 1));
        const named = dir ? rest.map((file) => `${dir}/${file.split("/").pop()}`) : [];
        return program === "mv" ? [...rest, ...named] : named;
      }
      const files = operands(args);
      if (files.length < 2) return [];
      return program === "mv" ? files : [files[files.length - 1]!];
    }
    default:
      return [];
  }
}

/** The paths (as the command spells them, relative to its folder or absolute) a command writes. */
export function bashWrittenPaths(command: string): string[] {
  const found = new Set<string>();
  for (const segment of segments(command)) {
    const all = words(segment.trim());
    if (!all || all.length === 0) continue;
    const rest: string[] = [];
    for (let i = 0; i < all.length; i++) {
      const word = all[i]!;
      if (/^(\d*|&)>[>|]?$/.test(word)) {
        const target = all[++i];
        if (target !== undefined && !isDevice(target)) found.add(target);
      } else if (/^\d*>&$/.test(word) || word === "<" || word === "<>") i++;
      else rest.push(word);
    }
    let at = 0;
    // `VAR=x cmd`, `sudo cmd`, `env A=b cmd`.
    while (at < rest.length && (PREFIXES.has(rest[at]!) || /^\w+=/.test(rest[at]!))) at++;
    const program = rest[at]?.split("/").pop();
    if (program && WRITERS.has(program)) for (const path of writtenBy(program, rest.slice(at + 1))) found.add(path);
  }
  return [...found].filter((path) => path !== "" && path !== "-" && !path.includes(DYNAMIC) && !isDevice(path));
}
