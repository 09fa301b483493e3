import { execFileSync } from "node:child_process";
import type { CommitInput } from "../service/commits.js";
import { type HookPayload, isRow, text } from "./hook-payload.js";

/**
 * A `git commit` the agent ran through Claude Code's Bash tool. PostToolUse runs after every Bash
 * call, so deciding costs two regular expressions over what the payload already holds; git is
 * asked only after a commit succeeded, which git says on its first line of output:
 * `[<branch> <sha>] <subject>` (also `[<branch> (root-commit) <sha>]`).
 */
const RUNS_GIT_COMMIT = /\bgit\b[^\n;&|]*\scommit\b/;
const COMMITTED = /^\[[^\]\n]*?\b([0-9a-f]{7,40})\] /m;
/** What git says when `commit` made nothing: the call succeeded, no commit. */
const NOTHING = /nothing (?:added )?to commit|no changes added to commit/;
const GIT_TIMEOUT_MS = 3_000;
/** A quiet commit is HEAD only if git made it during the call (plus this much clock slack). */
const QUIET_SLACK_MS = 5_000;

/**
 * The commit a successful `git commit` made: the sha it printed, or `HEAD` when it printed
 * nothing (`-q`), which readCommit then checks by its time; undefined for any other Bash call.
 */
export function committedSha(payload: HookPayload): string | undefined {
  if (payload.tool_name !== "Bash" || !isRow(payload.tool_input) || !isRow(payload.tool_response)) return undefined;
  const command = text(payload.tool_input.command);
  if (!command || !RUNS_GIT_COMMIT.test(command) || payload.tool_response.interrupted === true) return undefined;
  const stdout = text(payload.tool_response.stdout) ?? "";
  const sha = COMMITTED.exec(stdout)?.[1];
  if (sha) return sha;
  return NOTHING.test(`${stdout}${text(payload.tool_response.stderr) ?? ""}`) ? undefined : "HEAD";
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
