import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { checkWritable, readText } from "./files.js";
import { installedCli, projectBin } from "./installation.js";
import { SetupError } from "./json-file.js";
import { newReport, noteDatabaseKept, record, type SetupReport } from "./report.js";

/**
 * `arbeit setup git`: a pre-commit hook that refuses a commit staging files another session has
 * reserved exclusively, naming the holder (`arbeit check-edit --staged`). Its text never names a
 * way around it: an agent reads the hook and its refusal. A hook already there is kept beside
 * ours (renamed pre-commit.before-arbeit) and run first, with the same arguments; `--remove`
 * deletes ours and puts it back. Hooks live in the repository's hooks folder (core.hooksPath
 * honoured), which is never committed, so the hook may name this installation by absolute path.
 */

const MARK = "# arbeit: pre-commit guard";
const KEPT = "pre-commit.before-arbeit";

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The folder git runs hooks from, for the repository around `dir`. */
function hooksDir(dir: string): string {
  let path: string;
  try {
    path = execFileSync("git", ["rev-parse", "--git-path", "hooks"], { cwd: dir, encoding: "utf8" }).trim();
  } catch {
    throw new SetupError(`${dir} is not inside a git repository (git rev-parse failed); nothing was written.`);
  }
  return isAbsolute(path) ? path : join(dir, path);
}

function hookScript(program: string): string {
  return `#!/bin/sh
${MARK}, written by \`arbeit setup git\` (\`arbeit setup git --remove\` takes it out).
# Refuses a commit that stages files another live session reserved exclusively, naming the
# holder. A hook that was here before runs first.
hooks=$(dirname "$0")
if [ -x "$hooks/${KEPT}" ]; then "$hooks/${KEPT}" "$@" || exit $?; fi
arbeit=${program}
[ ! -x "$arbeit" ] || "$arbeit" check-edit --staged
`;
}

/** True when the hook at `path` is the guard; a hook that is no file (a pipe, a dangling link) is refused. */
const isOurs = (path: string) => readText(path)?.includes(MARK) ?? false;

export function setupGit(options: { dir: string }): SetupReport {
  const report = newReport("git", options.dir);
  const hooks = hooksDir(options.dir);
  const hook = join(hooks, "pre-commit");
  const kept = join(hooks, KEPT);
  const program = projectBin(options.dir)
    ? `"$(git rev-parse --show-toplevel)/node_modules/.bin/arbeit"`
    : shellQuote(installedCli());
  const script = hookScript(program);
  const current = readText(hook);
  checkWritable(hook, hooks);
  if (current?.includes(MARK)) {
    if (current === script) record(report, hook, "unchanged", "the Arbeit guard is installed");
    else {
      writeFileSync(hook, script);
      record(report, hook, "updated", "the Arbeit guard, now running this installation");
    }
    return report;
  }
  if (existsSync(hook)) {
    if (existsSync(kept))
      throw new SetupError(`${kept} already exists; move it away so setup can keep your own pre-commit hook there.`);
    renameSync(hook, kept);
    record(report, kept, "created", "your own pre-commit hook, kept; the guard runs it first");
  }
  mkdirSync(hooks, { recursive: true });
  writeFileSync(hook, script, { mode: 0o755 });
  chmodSync(hook, 0o755);
  record(report, hook, "created", "the Arbeit guard: commits of files another session reserved are refused");
  return report;
}

export function removeGit(options: { dir: string }): SetupReport {
  const report = newReport("git", options.dir, "remove");
  const hooks = hooksDir(options.dir);
  const hook = join(hooks, "pre-commit");
  const kept = join(hooks, KEPT);
  if (!isOurs(hook)) {
    record(report, hook, "unchanged", existsSync(hook) ? "not the Arbeit guard; kept" : "no pre-commit hook");
    return report;
  }
  rmSync(hook);
  record(report, hook, "removed", "the Arbeit guard");
  if (existsSync(kept)) {
    renameSync(kept, hook);
    record(report, hook, "updated", "your own pre-commit hook, back in its place");
  }
  noteDatabaseKept(report);
  return report;
}
