import { statSync } from "node:fs";
import { fromDirectory } from "../domain/paths.js";
import { changedFiles } from "../service/git-commit.js";
import { programOf, type ShellCommand, shellCommands, shellScript, UNKNOWN } from "../service/shell-commands.js";

/**
 * The files a shell command changes, as far as a reading of its text can tell, so that a shell
 * call is held to file reservations like an edit. The line is read as a shell reads it (quotes,
 * `&&`, `;`, `|`, subshells, `$(...)`, here-documents, comments) and `cd` is followed from one
 * command to the next. It counts:
 *
 * - output redirections (`>`, `>>`, `>|`, `&>`, `N>`, `<>`) to a file, not to `/dev/...`;
 * - `tee`, `touch`, `truncate`, `shred`, `unlink` and `ln` (the link) operands, `dd of=`,
 *   `sed -i` and `perl -i` files;
 * - `rm`, `rmdir` and `find ... -delete` (or `-exec` of one of these programs): everything below
 *   the paths named, so that deleting a folder counts for the files in it;
 * - `mv`: the sources and everything below them, and the destination; `cp`, `install`: the
 *   destination (inside it when it is a folder), with everything below it;
 * - git: `mv`, `rm`, `restore`, `checkout` and `clean` paths, and for `commit`, `stash` and
 *   `reset --hard` the files git holds changes of (asked of git in the folder the command runs in);
 * - the scripts handed to `sh -c`, `bash -c` and `eval`, read the same way.
 *
 * What it cannot know is left alone: a path or a `cd` folder built from a variable, `$(...)`,
 * a backquote or `~`; files named on standard input (`xargs`); scripts and interpreters (`python
 * -c`, `node -e`, `make`); and git commands that rewrite files wholesale (`checkout <branch>`,
 * `switch`, `merge`, `pull`, `rebase`, `apply`). A wildcard operand (`rm src/*.ts`) is kept as a
 * pattern.
 */

/** The program `args` would run next, past wrappers that run their operand (`sudo rm`, `timeout 5 rm`). */
const WRAPPERS = new Set(["sudo", "doas", "builtin", "nice", "ionice", "stdbuf", "timeout", "env", "command"]);
/** Wrapper options whose value is the next word. */
const WRAPPER_VALUES = new Set([
  "-u",
  "-g",
  "-n",
  "-c",
  "-s",
  "-k",
  "-o",
  "-e",
  "-i",
  "--signal",
  "--kill-after",
  "--user",
]);
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh"]);
/** `sh -c 'bash -c "..."'` nests; deeper than this is not followed. */
const MAX_DEPTH = 4;

/** Where a command's relative paths start: "" (the folder the line runs in), a path, or null (unknown). */
type Folder = string | null;

/** What a line changes: paths as the line spells them, taken from the folder it starts in. */
interface Found {
  paths: string[];
  /** Folders where git's changes are written away (commit, stash, reset): staged, or every change. */
  git: Array<{ dir: string; unstaged: boolean }>;
}

const base = (path: string) => path.replace(/\/+$/, "").split("/").pop() ?? path;
const below = (path: string) => `${path.replace(/\/+$/, "")}/**`;
const isDevice = (path: string) => path.startsWith("/dev/");
const join = (dir: Folder, path: string): string | null => {
  if (path.includes(UNKNOWN)) return null;
  if (path.startsWith("/")) return path;
  if (dir === null) return null;
  return dir === "" ? path : `${dir.replace(/\/+$/, "")}/${path}`;
};

/** The operands of `args`: words after the options (`--` ends them); `values` take the next word. */
function operands(args: string[], values: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (options && arg === "--") options = false;
    else if (options && values.has(arg)) i++;
    else if (!(options && arg.startsWith("-") && arg !== "-")) out.push(arg);
  }
  return out;
}

/** The command's program and arguments past assignments and wrappers. */
function run(words: string[]): { program: string; args: string[] } | undefined {
  let found = programOf(words);
  while (found && WRAPPERS.has(base(found.program))) {
    const wrapper = base(found.program);
    let at = 0;
    const args = found.args;
    while (at < args.length && (args[at]!.startsWith("-") || /^\w+=/.test(args[at]!)))
      at += WRAPPER_VALUES.has(args[at]!) ? 2 : 1;
    if (wrapper === "timeout") at++;
    found = programOf(args.slice(at));
  }
  return found && { program: base(found.program), args: found.args };
}

/** `mv`/`cp`/`install`/`ln` operands: the sources and the destination (`-t DIR` honoured). */
function sourcesAndTarget(args: string[]): { sources: string[]; target?: string; into: boolean } {
  const at = args.findIndex((arg) => arg === "-t" || arg === "--target-directory");
  const attached = args.find((arg) => arg.startsWith("--target-directory="));
  if (at >= 0 || attached) {
    const target = attached ? attached.slice("--target-directory=".length) : args[at + 1];
    return { sources: operands(args.filter((_, i) => i !== at && i !== at + 1)), target, into: true };
  }
  const files = operands(args, new Set(["-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"]));
  if (files.length < 2) return { sources: files, into: false };
  return { sources: files.slice(0, -1), target: files[files.length - 1], into: files.length > 2 };
}

/** What one simple command changes, its relative paths taken from `dir`. */
function changes(words: string[], dir: Folder, isFolder: (path: string) => boolean, found: Found, depth: number): void {
  /** A path already taken from the command's folder; `all`: everything below it too. */
  const add = (at: string | null, all = false) => {
    if (at === null || at === "" || at === "-" || isDevice(at)) return;
    found.paths.push(at);
    if (all) found.paths.push(below(at));
  };
  const put = (path: string | undefined, all = false) => add(path === undefined ? null : join(dir, path), all);
  /** A destination: inside it when it is a folder, else itself. */
  const into = (target: string | undefined, sources: string[], forced: boolean) => {
    if (target === undefined) return;
    const at = join(dir, target);
    if (at !== null && (forced || target.endsWith("/") || isFolder(at)))
      for (const source of sources) put(`${target.replace(/\/+$/, "")}/${base(source)}`, true);
    else put(target, true);
  };
  const command = run(words);
  if (!command) return;
  const { program, args } = command;
  switch (program) {
    case "tee":
    case "touch":
    case "shred":
    case "unlink":
      for (const path of operands(args, new Set(["-n", "-s", "--iterations", "--size"]))) put(path);
      return;
    case "truncate":
      for (const path of operands(args, new Set(["-s", "-r", "--size", "--reference"]))) put(path);
      return;
    case "rm":
    case "rmdir":
      for (const path of operands(args)) put(path, true);
      return;
    case "dd":
      for (const arg of args) if (arg.startsWith("of=")) put(arg.slice(3));
      return;
    case "sed":
    case "perl":
      inPlace(args, put);
      return;
    case "mv": {
      const { sources, target, into: forced } = sourcesAndTarget(args);
      if (target === undefined) return;
      for (const source of sources) put(source, true);
      into(target, sources, forced);
      return;
    }
    case "cp":
    case "install": {
      const { sources, target, into: forced } = sourcesAndTarget(args);
      into(target, sources, forced);
      return;
    }
    case "ln": {
      const { sources, target, into: forced } = sourcesAndTarget(args);
      if (target === undefined) for (const source of sources) put(base(source));
      else if (forced || isFolder(join(dir, target) ?? "")) for (const s of sources) put(`${target}/${base(s)}`);
      else put(target);
      return;
    }
    case "find":
      findDeletes(args, put);
      return;
    case "git":
      git(args, dir, add, found);
      return;
    case "eval":
      if (depth < MAX_DEPTH) read(args.join(" "), dir, isFolder, found, depth + 1);
      return;
    default:
      if (SHELLS.has(program) && depth < MAX_DEPTH) {
        const script = shellScript(args);
        if (script !== undefined) read(script, dir, isFolder, found, depth + 1);
      }
  }
}

/** `sed -i` / `perl -i`: the files after the script (every operand when `-e`/`-f` gives it). */
function inPlace(args: string[], put: (path: string) => void): void {
  if (!args.some((arg) => /^-[a-zA-Z]*i/.test(arg) || arg.startsWith("--in-place"))) return;
  const files: string[] = [];
  let script = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-e" || arg === "-f" || arg === "--expression" || arg === "--file" || /^-[a-zA-Z]*e$/.test(arg)) {
      script = true;
      i++;
    } else if (!arg.startsWith("-")) files.push(arg);
  }
  // Without -e/-f, the first operand is the script.
  for (const file of script ? files : files.slice(1)) put(file);
}

/** `find PATH... -delete` (or `-exec rm {} ;` and other deleting programs): everything below PATH. */
function findDeletes(args: string[], put: (path: string, all?: boolean) => void): void {
  const start = args.findIndex((arg) => arg.startsWith("-") || arg === "(" || arg === "!");
  const roots = start < 0 ? args : args.slice(0, start);
  const exec = args.findIndex((arg) => /^-(exec|execdir|ok|okdir)$/.test(arg));
  const deleting =
    args.includes("-delete") ||
    (exec >= 0 &&
      ["rm", "rmdir", "unlink", "shred", "mv", "truncate", "sed", "perl"].includes(base(args[exec + 1] ?? "")));
  if (deleting) for (const root of roots.length > 0 ? roots : ["."]) put(root, true);
}

/** git's options that take the next word as their value. */
const GIT_VALUES = new Set(["-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"]);
/** `git commit` options whose value is the next word (short ones also at the end of a cluster). */
const COMMIT_SHORT_VALUES = new Set(["m", "F", "C", "c", "t"]);
const COMMIT_LONG_VALUES = new Set([
  "--message",
  "--file",
  "--author",
  "--date",
  "--reuse-message",
  "--reedit-message",
  "--fixup",
  "--squash",
  "--template",
  "--cleanup",
  "--trailer",
  "--pathspec-from-file",
]);

function git(args: string[], dir: Folder, add: (at: string | null, all?: boolean) => void, found: Found): void {
  let at = 0;
  let here = dir;
  for (; at < args.length && args[at]!.startsWith("-"); at++) {
    if (args[at] === "-C") here = join(here, args[++at] ?? UNKNOWN);
    else if (GIT_VALUES.has(args[at]!)) at++;
  }
  const sub = args[at];
  const rest = args.slice(at + 1);
  const put = (path: string) => add(join(here, path), true);
  if (sub === "rm" || sub === "clean") {
    const paths = operands(rest, new Set(["-e", "--exclude"]));
    for (const path of paths.length > 0 || sub === "rm" ? paths : ["."]) put(path);
  } else if (sub === "mv") {
    const paths = operands(rest);
    for (const path of paths) put(path);
  } else if (sub === "restore" || sub === "checkout") {
    const dash = rest.indexOf("--");
    const paths = dash >= 0 ? rest.slice(dash + 1) : operands(rest, new Set(["-s", "--source", "-b", "-B"]));
    for (const path of paths) put(path);
  } else if (sub === "commit" || sub === "stash" || (sub === "reset" && rest.includes("--hard"))) {
    if (here === null) return;
    if (sub === "stash" && rest[0] !== undefined && !["push", "save", "-u", "-k", "-m"].includes(rest[0])) return;
    if (sub === "commit") {
      if (rest.some((arg) => arg === "--dry-run" || arg === "-h" || arg === "--help")) return;
      const { paths, all } = commitArgs(rest);
      for (const path of paths) put(path);
      found.git.push({ dir: here, unstaged: all });
    } else found.git.push({ dir: here, unstaged: true });
  }
}

/** `git commit`'s pathspec and whether it takes every tracked change (`-a`). */
function commitArgs(args: string[]): { paths: string[]; all: boolean } {
  const paths: string[] = [];
  let all = false;
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!options || !arg.startsWith("-") || arg === "-") paths.push(arg);
    else if (arg === "--") options = false;
    else if (arg === "--all") all = true;
    else if (COMMIT_LONG_VALUES.has(arg)) i++;
    else if (!arg.startsWith("--")) {
      // A cluster such as `-am msg`: letters are flags until one takes a value (the rest, or the next word).
      for (let at = 1; at < arg.length; at++) {
        if (arg[at] === "a") all = true;
        if (COMMIT_SHORT_VALUES.has(arg[at]!)) {
          if (at === arg.length - 1) i++;
          break;
        }
      }
    }
  }
  return { paths, all };
}

/** Reads a line's commands in order, following `cd` (a subshell's ends with it). */
function read(line: string, start: Folder, isFolder: (path: string) => boolean, found: Found, depth: number): void {
  const folders = new Map<string, Folder>([["", start]]);
  const folderOf = (command: ShellCommand): Folder => {
    for (let n = command.scopes.length; n >= 0; n--) {
      const known = folders.get(command.scopes.slice(0, n).join(","));
      if (known !== undefined) return known;
    }
    return start;
  };
  for (const command of shellCommands(line)) {
    const dir = folderOf(command);
    for (const { op, target } of command.redirects)
      if (/^(\d*|&)>[>|]?$|^\d*<>$/.test(op)) {
        const at = join(dir, target);
        if (at !== null && !isDevice(at)) found.paths.push(at);
      }
    const words = command.words;
    const cd = run(words);
    if (cd && (cd.program === "cd" || cd.program === "pushd" || cd.program === "popd")) {
      const target = operands(cd.args)[0];
      const next = cd.program === "popd" || target === undefined || target === "-" ? null : join(dir, target);
      folders.set(command.scopes.join(","), next);
    } else changes(words, dir, isFolder, found, depth);
  }
}

/**
 * The files a shell command run in `folder` changes, absolute (or as patterns, with wildcards):
 * what it names, and the files git holds changes of where it commits, stashes or resets.
 */
export function shellWrittenPaths(command: string, folder: string): string[] {
  const found: Found = { paths: [], git: [] };
  const isFolder = (path: string) => {
    try {
      return statSync(fromDirectory(folder, path)).isDirectory();
    } catch {
      return false;
    }
  };
  read(command, "", isFolder, found, 0);
  const paths = found.paths
    .filter((path) => path !== "" && !path.includes(UNKNOWN))
    .map((path) => fromDirectory(folder, path));
  for (const { dir, unstaged } of found.git) paths.push(...changedFiles(fromDirectory(folder, dir || "."), unstaged));
  return [...new Set(paths)];
}

/** As shellWrittenPaths, without asking git or the file system: the paths as the line spells them. */
export function bashWrittenPaths(command: string): string[] {
  const found: Found = { paths: [], git: [] };
  read(command, "", () => false, found, 0);
  return [...new Set(found.paths)];
}
