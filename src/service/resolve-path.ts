import { lstatSync, readlinkSync } from "node:fs";

/** Linux gives up (ELOOP) after 40 symlinks in one lookup; so does this walk. */
const MAX_SYMLINKS = 40;

/** Where an absolute path starts: `/`, or on Windows also a drive (`C:/`). */
const ANCHOR = process.platform === "win32" ? /^(?:[A-Za-z]:)?\// : /^\//;

/**
 * Where `path` (absolute, `/`-separated) really leads, walked one component at a time as the
 * kernel walks it: a symlink is replaced by its target before the next component is read, so
 * `link/..` is the parent of the link's target, not the folder holding the link. Once a
 * component does not exist, the rest can only be applied lexically (nothing below it exists to
 * follow); a `..` that climbs back into existing folders resumes the real walk, so
 * `missing/../link-out/x` still follows `link-out`. A symlink whose target is missing leads to
 * that target, which is where a write through it would create the file.
 *
 * Returns null when the path cannot be resolved at all: a symlink loop, or a folder that may
 * not be read. Such a path is never taken to be inside anything.
 */
export function resolveLikeKernel(spelled: string): string | null {
  const path = process.platform === "win32" ? spelled.replaceAll("\\", "/") : spelled;
  const anchor = ANCHOR.exec(path)?.[0];
  if (anchor === undefined) return null;
  const pending = path.slice(anchor.length).split("/").reverse();
  let resolved: string[] = [];
  let prefix = anchor;
  // How many leading components of `resolved` exist; past it the walk is lexical.
  let existing = Number.POSITIVE_INFINITY;
  let symlinks = 0;
  while (pending.length > 0) {
    const part = pending.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      // At the filesystem root `..` stays put, as it does for the kernel.
      resolved.pop();
      if (resolved.length <= existing) existing = Number.POSITIVE_INFINITY;
      continue;
    }
    resolved.push(part);
    if (resolved.length > existing) continue;
    const current = prefix + resolved.join("/");
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return null;
      existing = resolved.length - 1;
      continue;
    }
    if (!isLink) continue;
    if (++symlinks > MAX_SYMLINKS) return null;
    let target: string;
    try {
      target = readlinkSync(current);
    } catch {
      return null;
    }
    if (process.platform === "win32") target = target.replaceAll("\\", "/");
    resolved.pop();
    const targetAnchor = ANCHOR.exec(target)?.[0];
    if (targetAnchor !== undefined) {
      resolved = [];
      prefix = targetAnchor;
      target = target.slice(targetAnchor.length);
    }
    pending.push(...target.split("/").reverse());
  }
  return prefix + resolved.join("/");
}
