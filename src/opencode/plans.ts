import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { FileTouch } from "./file-touches.js";

/**
 * OpenCode's plan agent writes its plan to a markdown file in a `plans` folder (the project's
 * `.opencode/plans/`, or `plans/` in OpenCode's data folder), and `plan_exit` asks the person to
 * approve it; the tool finishes (and `tool.execute.after` fires) only when they do, naming no
 * file. The plugin keeps the last plan file each session wrote and, at `plan_exit`, reads it:
 * the approved plan, recorded by src/service/host-plans.ts.
 */
export class SessionPlans {
  readonly #files = new Map<string, string>();

  /** Notes a plan file among a tool call's touches. */
  wrote(session: string, touches: readonly FileTouch[]): void {
    for (const touch of touches)
      if (touch.operation === "write" && basename(dirname(touch.path)) === "plans" && touch.path.endsWith(".md"))
        this.#files.set(session, touch.path);
  }

  /** The text of the session's plan, or undefined when it wrote none (or it is gone). */
  approved(session: string, maxChars: number): string | undefined {
    const file = this.#files.get(session);
    if (!file) return undefined;
    try {
      const text = readFileSync(file, "utf8");
      return text.trim() === "" ? undefined : text.slice(0, maxChars);
    } catch {
      return undefined;
    }
  }

  forget(session: string): void {
    this.#files.delete(session);
  }
}
