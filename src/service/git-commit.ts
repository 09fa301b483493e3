import { execFileSync } from "node:child_process";
import type { CommitInput } from "./commits.js";

/**
 * A `git commit` an agent ran through a host's shell tool (Claude Code's Bash, OpenCode's bash).
 * The hosts run their hook after every shell call, so deciding costs two regular expressions over
 * what the host already holds; git is asked only after a commit succeeded, which git says on its
 * first line of output: `[<branch> <sha>] <subject>` (also `[<branch> (root-commit) <sha>]`).
 */
const RUNS_GIT_COMMIT = /\bgit\b[^\n;&|]*\scommit\b/;
const COMMITTED = /^\[[^\]\n]*?\b([0-9a-f]{7,40})\] /m;
/** What git says when `commit` made nothing: the call succeeded, no commit. */
const NOTHING = /nothing (?:added )?to commit|no changes added to commit/;
const GIT_TIMEOUT_MS = 3_000;
/** A quiet commit is HEAD only if git made it during the call (plus this much clock slack). */
const QUIET_SLACK_MS = 5_000;

export interface ShellCall {
  command: string;
  /** What the command printed (stdout, and stderr where the host keeps it apart). */
  output: string;
  interrupted?: boolean;
}

/**
 * The commit a successful `git commit` made: the sha it printed, or `HEAD` when it printed
 * nothing (`-q`), which readCommit then checks by its time; undefined for any other call.
 */
export function commitMade(call: ShellCall): string | undefined {
  if (!RUNS_GIT_COMMIT.test(call.command) || call.interrupted === true) return undefined;
  const sha = COMMITTED.exec(call.output)?.[1];
  if (sha) return sha;
  return NOTHING.test(call.output) ? undefined : "HEAD";
}

/**
 * The commit as git records it in the repository at `dir`: full sha, subject, changed files.
 * `HEAD` is taken only when it was committed at or after `since` (ms); else undefined.
 */
export function readCommit(dir: string, sha: string, since = 0): CommitInput | undefined {
  const out = execFileSync("git", ["show", "--no-color", "--name-only", "--format=%H%x1f%ct%x1f%s", sha, "--"], {
    cwd: dir,
    encoding: "utf8",
    timeout: GIT_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [head = "", ...files] = out.split("\n");
  const [full = sha, seconds = "0", subject = ""] = head.split("\x1f");
  if (sha === "HEAD" && Number(seconds) * 1000 < since - QUIET_SLACK_MS) return undefined;
  return { sha: full, subject, files: files.filter((line) => line !== "") };
}
