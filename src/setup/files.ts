import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { dirname, relative } from "node:path";

/** A text file's content, or undefined when there is no such file. */
export function readText(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

/**
 * Deletes a file setup is taking out, then the folders it leaves empty up to the project
 * (`.claude/`, `.opencode/plugin/`): setup created them for that file alone.
 */
export function removeFile(path: string, projectDir: string): void {
  rmSync(path, { force: true });
  for (let folder = dirname(path); isInside(folder, projectDir); folder = dirname(folder)) {
    if (readdirSync(folder).length > 0) break;
    rmdirSync(folder);
  }
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
}
