import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { dirname, relative } from "node:path";
import { createdBySetup, forgetCreated } from "./created-files.js";

/** A text file's content, or undefined when there is no such file. */
export function readText(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

/**
 * Deletes a file setup is taking out when setup created it (`proven`: its content shows setup
 * wrote it), then the folders setup created for it (`.claude/`, `.opencode/plugin/`) that it
 * leaves empty. False when the file is the user's: it stays.
 */
export function removeFile(path: string, projectDir: string, proven = false): boolean {
  if (!proven && !createdBySetup(projectDir, path)) return false;
  rmSync(path, { force: true });
  const gone = [path];
  for (let folder = dirname(path); isInside(folder, projectDir); folder = dirname(folder)) {
    if (!createdBySetup(projectDir, folder) || readdirSync(folder).length > 0) break;
    rmdirSync(folder);
    gone.push(folder);
  }
  forgetCreated(projectDir, gone);
  return true;
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
}
