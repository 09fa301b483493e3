import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ServiceTarget } from "./target.js";

/**
 * Whether the project's edit check fails closed: while the service cannot be asked, a file tool's
 * edit is refused instead of let through unchecked. Set in the committed `.arbeit/service.json`
 * as `"edit_check": "fail-closed"`; anything else, or no file, is fail-open (the default).
 */
export function editCheckFailsClosed(target: Pick<ServiceTarget, "folder">): boolean {
  if (!target.folder) return false;
  try {
    const file = JSON.parse(readFileSync(join(target.folder, "service.json"), "utf8")) as { edit_check?: unknown };
    return file?.edit_check === "fail-closed";
  } catch {
    return false;
  }
}
