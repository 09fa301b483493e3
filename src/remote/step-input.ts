import { ArbeitError } from "../domain/errors.js";
import { isAbsolutePath } from "../domain/paths.js";
import { LIMITS } from "../schemas/limits.js";
import type { CommitInput } from "../service/commits.js";

/**
 * Checks of a hook step's input as it arrives over the network (POST /api/hook): the client built
 * it, but the service trusts nothing a request says. Each check throws INVALID_ARGUMENT naming the
 * field; text is bounded so one request cannot make the store hold megabytes.
 */
export type Row = Record<string, unknown>;

const bad = (field: string, why: string) =>
  new ArbeitError("INVALID_ARGUMENT", `The hook's input.${field} ${why}.`, { details: { field: `input.${field}` } });

export function row(value: unknown, field = "(input)"): Row {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad(field, "must be an object");
  return value as Row;
}

export function text(value: Row, field: string, max: number): string {
  const found = value[field];
  if (typeof found !== "string") throw bad(field, "must be a string");
  if (found.length > max) throw bad(field, `must be at most ${max} characters`);
  return found;
}

export function optionalText(value: Row, field: string, max: number): string | undefined {
  return value[field] === undefined ? undefined : text(value, field, max);
}

export function count(value: Row, field: string): number {
  const found = value[field];
  if (typeof found !== "number" || !Number.isSafeInteger(found) || found < 0)
    throw bad(field, "must be a whole number of at least 0");
  return found;
}

export function optionalCount(value: Row, field: string): number | undefined {
  return value[field] === undefined ? undefined : count(value, field);
}

export function oneOf<T extends string>(value: Row, field: string, choices: readonly T[]): T {
  const found = value[field];
  if (typeof found !== "string" || !choices.includes(found as T))
    throw bad(field, `must be one of ${choices.join(", ")}`);
  return found as T;
}

export function list<T>(value: Row, field: string, max: number, item: (entry: unknown, field: string) => T): T[] {
  const found = value[field];
  if (!Array.isArray(found)) throw bad(field, "must be an array");
  if (found.length > max) throw bad(field, `must hold at most ${max} items`);
  return found.map((entry, index) => item(entry, `${field}[${index}]`));
}

export function textItem(max: number) {
  return (entry: unknown, field: string): string => {
    if (typeof entry !== "string") throw bad(field, "must be a string");
    if (entry.length > max) throw bad(field, `must be at most ${max} characters`);
    return entry;
  };
}

/** A file's path relative to the project root: what a client sends (an absolute one would name the service's disk). */
export function relativePath(value: Row, field: string): string {
  const path = text(value, field, LIMITS.file_path);
  if (isAbsolutePath(path)) throw bad(field, "must be relative to the project root");
  return path;
}

/** Room for any commit's sha, subject and files (the store keeps its first 200 files). */
const COMMIT_FILES = 10_000;

/** A commit as the client read it from git. */
export function commitInput(value: unknown, field: string): CommitInput {
  const commit = row(value, field);
  return {
    sha: text(commit, "sha", 200),
    subject: text(commit, "subject", 10_000),
    files: list(commit, "files", COMMIT_FILES, textItem(LIMITS.file_path)),
  };
}

/** The input of a step that takes none: an object, whatever it holds. */
export function noInput(value: unknown): object {
  row(value);
  return {};
}
