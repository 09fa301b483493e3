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
const GIT_TIMEOUT_MS = 3_000;

/** The sha a successful `git commit` printed, or undefined for any other Bash call. */
export function committedSha(payload: HookPayload): string | undefined {
  if (payload.tool_name !== "Bash" || !isRow(payload.tool_input) || !isRow(payload.tool_response)) return undefined;
  const command = text(payload.tool_input.command);
  if (!command || !RUNS_GIT_COMMIT.test(command) || payload.tool_response.interrupted === true) return undefined;
  return COMMITTED.exec(text(payload.tool_response.stdout) ?? "")?.[1];
}

/** The commit as git records it in the repository at `dir`: full sha, subject, changed files. */
export function readCommit(dir: string, sha: string): CommitInput {
  const out = execFileSync("git", ["show", "--no-color", "--name-only", "--format=%H%x1f%s", sha, "--"], {
    cwd: dir,
    encoding: "utf8",
    timeout: GIT_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [head = "", ...files] = out.split("\n");
  const [full = sha, subject = ""] = head.split("\x1f");
  return { sha: full, subject, files: files.filter((line) => line !== "") };
}
