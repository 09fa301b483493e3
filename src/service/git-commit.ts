import type { CommitInput } from "./commits.js";
import { commandsRun, programOf } from "./shell-commands.js";

// Claude Code's PreToolUse hook and the OpenCode plugin load this module before every file tool,
// and git runs only for a commit: child_process is loaded when git first runs, not with the module
// (a static import, or node:module to require it, would load on every edit). Node 20.16+ and Bun
// hand out built-ins through process; the CLI's bundle is CommonJS, where require is at hand.
function childProcess(): typeof import("node:child_process") {
  if (typeof process.getBuiltinModule === "function") return process.getBuiltinModule("node:child_process");
  return require("node:child_process");
}

/**
 * A `git commit` an agent ran through a host's shell tool (Claude Code's Bash, OpenCode's bash).
 * The hosts run their hook after every shell call, so deciding costs a scan of the command line
 * and a regular expression over what the host already holds; git is asked only after a commit
 * succeeded, which git says on its first line of output: `[<branch> <sha>] <subject>` (also
 * `[<branch> (root-commit) <sha>]`).
 */
const COMMITTED = /^\[[^\]\n]*?\b([0-9a-f]{7,40})\] /m;
/**
 * What git says when `commit` made nothing: there was nothing to commit, or it failed (a line that
 * a compound command such as `git commit -m x; true` leaves in an otherwise successful call).
 */
const NOTHING = /nothing (?:added )?to commit|no changes added to commit|^(?:error|fatal): |^Aborting commit/m;
const GIT_TIMEOUT_MS = 3_000;
/** A commit counts only if git made it during the call (plus this much clock slack). */
const CLOCK_SLACK_MS = 5_000;
/** git's options that take the next word as their value (`git -C dir commit`). */
const GIT_OPTION_VALUES = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"]);
/** `commit` options after which nothing is committed. */
const NO_COMMIT = new Set(["--dry-run", "--help", "-h"]);

export interface ShellCall {
  command: string;
  /** What the command printed (stdout, and stderr where the host keeps it apart). */
  output: string;
  interrupted?: boolean;
  /** The host says the command failed (a non-zero exit). */
  failed?: boolean;
}

/**
 * True when one of the line's commands is `git [options] commit` itself, not a dry run: not a
 * `git commit` quoted, echoed, in a here-document or a comment, and not `git log` printing one.
 * A shell's `-c` script counts as run (`sh -c "git commit -m x"`).
 */
export function runsGitCommit(command: string): boolean {
  return commandsRun(command).some((words) => {
    const run = programOf(words);
    if (!run || (run.program !== "git" && !run.program.endsWith("/git"))) return false;
    let at = 0;
    while (at < run.args.length && run.args[at]!.startsWith("-")) at += GIT_OPTION_VALUES.has(run.args[at]!) ? 2 : 1;
    return run.args[at] === "commit" && !run.args.slice(at + 1).some((arg) => NO_COMMIT.has(arg));
  });
}

/**
 * The commit a successful `git commit` made: the sha it printed, or `HEAD` when it printed
 * nothing (`-q`); readCommit then keeps it only if git made it during the call. Undefined for any
 * other call, a failed or interrupted one included.
 */
export function commitMade(call: ShellCall): string | undefined {
  if (call.interrupted === true || call.failed === true || !runsGitCommit(call.command)) return undefined;
  const sha = COMMITTED.exec(call.output)?.[1];
  if (sha) return sha;
  return NOTHING.test(call.output) ? undefined : "HEAD";
}

/**
 * The commit as git records it in the repository at `dir`: full sha, subject, changed files;
 * undefined unless it was committed at or after `since` (ms), when the call started: a commit
 * the call did not make (HEAD after a commit that failed, a sha printed by something else) is
 * not the session's.
 */
export function readCommit(dir: string, sha: string, since: number): CommitInput | undefined {
  const out = childProcess().execFileSync(
    "git",
    ["show", "--no-color", "--name-only", "--format=%H%x1f%ct%x1f%s", sha, "--"],
    {
      cwd: dir,
      encoding: "utf8",
      timeout: GIT_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const [head = "", ...files] = out.split("\n");
  const [full = sha, seconds = "0", subject = ""] = head.split("\x1f");
  if (Number(seconds) * 1000 < since - CLOCK_SLACK_MS) return undefined;
  return { sha: full, subject, files: files.filter((line) => line !== "") };
}

/**
 * The files with changes git holds in the repository around `dir`, absolute: the staged ones (what
 * `git commit` records), and with `unstaged` the tracked files changed in the working tree too
 * (`commit -a`, `stash`, `reset --hard`). A rename counts by both its paths: moving a file away
 * changes it as much as editing it. None when `dir` is in no repository.
 */
export function changedFiles(dir: string, unstaged = false): string[] {
  const git = (args: string[]) =>
    childProcess().execFileSync("git", args, {
      cwd: dir,
      encoding: "utf8",
      timeout: GIT_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "ignore"],
    });
  const names = (args: string[]) => git(["diff", "--name-only", "-z", "--no-renames", "--diff-filter=ACDMT", ...args]);
  try {
    const root = git(["rev-parse", "--show-toplevel"]).trim();
    const listed = names(["--cached"]) + (unstaged ? names([]) : "");
    return [...new Set(listed.split("\0").filter((path) => path !== ""))].map((path) => `${root}/${path}`);
  } catch {
    return [];
  }
}
