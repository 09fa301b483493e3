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

/**
 * Forms only Windows gives a meaning to: a drive (`C:\x`, `C:/x`, the drive-relative `c:x`) or a
 * UNC share (`\\server\share`, `//server/share`). Under a POSIX root none of them names a file
 * in the project, whatever a folder happens to be called.
 */
export function isWindowsOnlyPath(path: string): boolean {
  return /^[A-Za-z]:/.test(path) || /^[\\/]{2}/.test(path);
}

/**
 * `path` taken from the folder `base` without collapsing any `..`: only the resolver may do
 * that, after following symlinks, since `link/..` is the parent of the link's target.
 */
export function fromDirectory(base: string, path: string): string {
  if (isAbsolutePath(path) || isWindowsOnlyPath(path)) return path;
  return `${base.replace(/[\\/]+$/, "")}/${path}`;
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
