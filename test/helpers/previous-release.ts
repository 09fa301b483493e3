import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository the tests run from; its git history holds the earlier releases. */
const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** An earlier release's built CLI, or why there is none. */
export interface EarlierRelease {
  commit: string;
  /** Its dist/cli/main.js, run with `node`. */
  cli: string;
  missing?: string;
}

const git = (args: string[]) => spawnSync("git", ["-C", REPO, ...args], { encoding: "utf8" });

/**
 * The release at `commit`, taken out of this repository's history with `git archive` (the
 * repository itself is left as it was: no worktree, no checkout) and built with its own
 * scripts/build.mjs, over this checkout's node_modules (a symlink, removed after the build). Built
 * once per commit into `${XDG_CACHE_HOME:-~/.cache}/arbeit-test/release-<sha>`: made aside under a
 * name of this process's own and renamed into place, so two test processes racing each build one
 * and the first rename wins; neither ever runs half a build. Each process runs its own copy of the
 * build (dist/, migrations/, package.json) beside a link to this checkout's node_modules, so the
 * cache never points into a checkout that may be gone. A clone without that commit (a shallow one)
 * is reported, not thrown, for the requirement helper to skip on or fail under CI.
 */
export function earlierRelease(commit: string): EarlierRelease {
  let release = copies.get(commit);
  if (release === undefined) {
    release = buildOnce(commit);
    copies.set(commit, release);
  }
  return release;
}

const copies = new Map<string, EarlierRelease>();

function buildOnce(commit: string): EarlierRelease {
  const resolved = git(["rev-parse", "--verify", "--quiet", `${commit}^{commit}`]);
  if (resolved.status !== 0) {
    const shallow = git(["rev-parse", "--is-shallow-repository"]).stdout.trim() === "true";
    const why = shallow
      ? `this clone is shallow and lacks commit ${commit} (run \`git fetch --unshallow\`)`
      : `commit ${commit} is not in this repository's history (${resolved.stderr.trim() || "git found no such commit"})`;
    return { commit, cli: "", missing: why };
  }
  const sha = resolved.stdout.trim();
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "arbeit-test");
  const dir = join(cache, `release-${sha}`);
  const cli = join(dir, "dist", "cli", "main.js");
  if (!existsSync(join(dir, ".built"))) {
    const staging = `${dir}.building-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    try {
      const tar = spawnSync(
        "sh",
        ["-c", 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"', REPO, sha, staging],
        {
          encoding: "utf8",
        },
      );
      if (tar.status !== 0) return { commit: sha, cli, missing: `git archive of ${sha} failed: ${tar.stderr.trim()}` };
      symlinkSync(join(REPO, "node_modules"), join(staging, "node_modules"));
      const build = spawnSync(process.execPath, ["scripts/build.mjs"], {
        cwd: staging,
        encoding: "utf8",
        timeout: 600_000,
      });
      if (build.status !== 0)
        return {
          commit: sha,
          cli,
          missing: `the build of ${sha} failed: ${(build.stderr || build.stdout).slice(-2000)}`,
        };
      unlinkSync(join(staging, "node_modules"));
      writeFileSync(join(staging, ".built"), `${new Date().toISOString()}\n`);
      try {
        renameSync(staging, dir);
      } catch {
        // Another run put its build in place first: that one is used.
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { commit: sha, cli: runnableCopy(dir) };
}

/** A copy of the build at `dir` for this process, resolving its dependencies in this checkout; removed at exit. */
function runnableCopy(dir: string): string {
  const copy = mkdtempSync(join(tmpdir(), "arbeit-release-"));
  process.once("exit", () => rmSync(copy, { recursive: true, force: true }));
  // Not the code cache the build's own runs left (the cache folder's path holds ".cache" too).
  const codeCache = join(dir, "dist", "cli", ".cache");
  cpSync(join(dir, "dist"), join(copy, "dist"), { recursive: true, filter: (src) => src !== codeCache });
  cpSync(join(dir, "migrations"), join(copy, "migrations"), { recursive: true });
  cpSync(join(dir, "package.json"), join(copy, "package.json"));
  symlinkSync(join(REPO, "node_modules"), join(copy, "node_modules"));
  return join(copy, "dist", "cli", "main.js");
}
