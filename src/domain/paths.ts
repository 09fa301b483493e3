/**
 * File paths are stored relative to the project root with forward slashes; a path
 * that leaves the root is never recorded. Pure string logic, so it behaves the same everywhere.
 */
function normalizeSegments(path: string): string[] | null {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(segment);
  }
  return out;
}

/** True for `/a`, `\\a`, `C:\\a` and `C:/a`: paths that do not hang off the project root. */
export function isAbsolutePath(path: string): boolean {
  return /^([A-Za-z]:)?[\\/]/.test(path);
}

/** Returns the project-relative form of `path`, or null when it points outside `root`. */
export function projectRelative(root: string, path: string): string | null {
  if (path.includes("\0")) return null;
  const unixRoot = root.replaceAll("\\", "/");
  const unixPath = path.replaceAll("\\", "/");
  const rootSegments = normalizeSegments(unixRoot);
  if (rootSegments === null) return null;
  const absolute = isAbsolutePath(unixPath) ? unixPath : `${unixRoot}/${unixPath}`;
  const segments = normalizeSegments(absolute);
  if (segments === null || segments.length <= rootSegments.length) return null;
  for (let i = 0; i < rootSegments.length; i++) if (segments[i] !== rootSegments[i]) return null;
  return segments.slice(rootSegments.length).join("/");
}
