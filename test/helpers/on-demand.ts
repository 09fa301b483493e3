import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** A package a test runs but the checkout must not depend on: installed once into a cache outside the repository. */
export interface OnDemandTool {
  /** The package's folder under the cache. */
  dir: string;
  /** Set when it could not be installed (no registry, say): why. */
  missing?: string;
}

/**
 * Installs `name@version` with npm into `${XDG_CACHE_HOME:-~/.cache}/arbeit-test/<folder>`, or
 * reuses the install found there. A failed install is reported, not thrown, so the test can skip
 * through the requirement helper.
 */
export function installOnDemand(name: string, version: string, folder: string): OnDemandTool {
  const prefix = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "arbeit-test", folder);
  const dir = join(prefix, "node_modules", ...name.split("/"));
  if (existsSync(join(dir, "package.json"))) return { dir };
  // Installed aside and renamed into place, so a test run beside this one never sees half an install.
  const staging = `${prefix}.installing-${process.pid}`;
  mkdirSync(staging, { recursive: true });
  const npm = spawnSync(
    "npm",
    ["install", "--prefix", staging, "--no-audit", "--no-fund", "--no-save", `${name}@${version}`],
    { encoding: "utf8", cwd: staging, timeout: 300_000 },
  );
  if (npm.status === 0) {
    try {
      renameSync(staging, prefix);
    } catch {
      // Another run put its install in place first: that one is used.
    }
  }
  rmSync(staging, { recursive: true, force: true });
  if (existsSync(join(dir, "package.json"))) return { dir };
  const said = `${npm.stderr}`.split("\n").filter((line) => line.startsWith("npm error"));
  const why = npm.error?.message ?? (said.slice(0, 2).join("; ") || `npm exited ${npm.status}`);
  return { dir, missing: `npm could not install ${name}@${version} into ${prefix} (${why})` };
}
