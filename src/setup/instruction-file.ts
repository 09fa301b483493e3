import { writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readText, removeFile } from "./files.js";
import { BLOCK_END, BLOCK_START, instructionBlock, instructionKind } from "./instructions.js";
import { SetupError } from "./json-file.js";
import { record, type SetupReport } from "./report.js";

/**
 * Arbeit's block in a Markdown file the user owns (CLAUDE.md, AGENTS.md). Only the text between
 * the markers is Arbeit's; adding the block and taking it out again gives back the user's file
 * byte for byte, so removal undoes exactly the blank line and newline that adding put around it.
 */

/** Where the block stands in `text`: from its start marker to the end of its end marker. */
function findBlock(text: string, path: string): { start: number; end: number } | undefined {
  const start = markerAt(text, BLOCK_START, 0);
  if (start < 0) return undefined;
  const endMarker = markerAt(text, BLOCK_END, start);
  if (endMarker < 0) {
    throw new SetupError(
      `${path} has ${BLOCK_START} without ${BLOCK_END}; add the missing end line where the block ends (the text inside is kept), then run again.`,
    );
  }
  const end = endMarker + BLOCK_END.length;
  if (markerAt(text, BLOCK_START, end) >= 0) {
    throw new SetupError(`${path} has more than one ${BLOCK_START} block; keep one, then run again.`);
  }
  return { start, end };
}

/** A marker counts only at the start of a line, so prose quoting it mid-sentence is left alone. */
function markerAt(text: string, marker: string, from: number): number {
  for (let at = text.indexOf(marker, from); at >= 0; at = text.indexOf(marker, at + 1)) {
    if (at === 0 || text[at - 1] === "\n") return at;
  }
  return -1;
}

/** The file with `block` in it: appended after a blank line, or replacing the block in place. */
export function withBlock(
  text: string | undefined,
  block: string,
  path: string,
): { text: string; action: "created" | "updated" | "unchanged" } {
  if (text === undefined) return { text: `${block}\n`, action: "created" };
  const found = findBlock(text, path);
  if (found) {
    if (text.slice(found.start, found.end) === block) return { text, action: "unchanged" };
    return { text: text.slice(0, found.start) + block + text.slice(found.end), action: "updated" };
  }
  if (text === "") return { text: `${block}\n`, action: "updated" };
  // A file without a final newline keeps going without one, so that removal can tell the cases apart.
  return { text: text.endsWith("\n") ? `${text}\n${block}\n` : `${text}\n\n${block}`, action: "updated" };
}

/** The file without the block (undefined: nothing else is left in it), or null when it has none. */
export function withoutBlock(text: string, path: string): { text: string | undefined } | null {
  const found = findBlock(text, path);
  if (!found) return null;
  let before = text.slice(0, found.start);
  let after = text.slice(found.end);
  if (after === "") {
    if (before.endsWith("\n\n")) before = before.slice(0, -2);
  } else if (after.startsWith("\n")) {
    after = after.slice(1);
    if (after === "" && before.endsWith("\n\n")) before = before.slice(0, -1);
    // One blank line stays between the text before the block and the text after it.
    else if (after.startsWith("\n") && (before === "" || before.endsWith("\n\n"))) after = after.slice(1);
  }
  const rest = before + after;
  return { text: rest.trim() === "" ? undefined : rest };
}

/** A change worked out now and made later: `writes` says whether making it writes the file. */
export type FileStep = ((report: SetupReport) => void) & { path: string; writes: boolean };

/**
 * Reads `path` and works out the change now, so that a refusal comes before any file of the
 * run is written; the returned step writes it and reports it.
 */
export function addInstructions(path: string): FileStep {
  const next = withBlock(readText(path), instructionBlock(instructionKind(dirname(path))), path);
  const step = (report: SetupReport) => {
    if (next.action !== "unchanged") writeFileSync(path, next.text);
    record(report, path, next.action, next.action === "unchanged" ? "Arbeit block already current" : "Arbeit block");
  };
  return Object.assign(step, { path, writes: next.action !== "unchanged" });
}

/** As addInstructions, taking the block out; a file left with nothing else in it is deleted. */
export function removeInstructions(path: string): FileStep {
  const text = readText(path);
  const next = text === undefined ? null : withoutBlock(text, path);
  const step = (report: SetupReport) => {
    if (next === null) record(report, path, "unchanged", "no Arbeit block");
    else if (next.text === undefined && removeFile(path, report.dir)) {
      record(report, path, "removed", "held only the Arbeit block");
    } else {
      writeFileSync(path, next.text ?? "");
      record(report, path, "updated", "Arbeit block removed");
    }
  };
  return Object.assign(step, { path, writes: next !== null });
}
