import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where this copy of Arbeit lives, and whether a project has its own. Setup writes commands and
 * imports that run the Arbeit the user just ran: the project's own copy when it has one (a path
 * inside the project, so the files can be committed), else this installation by absolute path.
 */

/** The CLI entry of this installation (dist/cli/main.js, from the sources and from dist alike). */
export function installedCli(): string {
  const entry = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
  try {
    return realpathSync(entry);
  } catch {
    return entry;
  }
}

/** True when code in `dir` can import the `arbeit` package (a project dependency). */
export function projectHasArbeit(dir: string): boolean {
  try {
    createRequire(join(dir, "package.json")).resolve("arbeit/package.json");
    return true;
  } catch {
    return false;
  }
}

/** The project's own `arbeit` executable, when npm installed one. */
export function projectBin(dir: string): string | undefined {
  const bin = join(dir, "node_modules", ".bin", "arbeit");
  return projectHasArbeit(dir) && existsSync(bin) ? bin : undefined;
}
