import { readServiceFile } from "../store/service-file.js";
import type { ServiceTarget } from "./target.js";

/**
 * Whether the project's edit check fails closed: while the service cannot be asked, a file tool's
 * edit is refused instead of let through unchecked. Set in the committed `.arbeit/service.json`
 * as `"edit_check": "fail-closed"`; without it (or without the file) the check fails open.
 */
export function editCheckFailsClosed(target: Pick<ServiceTarget, "folder">): boolean {
  if (!target.folder) return false;
  try {
    return readServiceFile(target.folder)?.edit_check === "fail-closed";
  } catch {
    // A file that cannot be read names no service either: the hook has said so already.
    return false;
  }
}
