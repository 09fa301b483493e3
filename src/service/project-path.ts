import { isAbsolutePath, isWindowsOnlyPath, projectRelative } from "../domain/paths.js";
import type { ServiceDeps } from "./operation.js";

/**
 * Where a path a host or agent names lies in the project: relative to the root, `/`-separated,
 * after resolving `..` and symlinks; null when it lies outside (or cannot be resolved inside).
 * Relative paths are taken from the project root. Recorded files and reserved paths alike.
 */
export function projectPath(deps: Pick<ServiceDeps, "projectRoot" | "realpath">, path: string): string | null {
  const root = deps.projectRoot.replaceAll("\\", "/");
  const foreign = root.startsWith("/") && isWindowsOnlyPath(path);
  const spelled = path.replaceAll("\\", "/");
  const resolved =
    foreign || spelled.includes("\0") ? null : deps.realpath(isAbsolutePath(spelled) ? spelled : `${root}/${spelled}`);
  return resolved === null ? null : projectRelative(deps.projectRoot, resolved);
}
