import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readText, removeFile } from "./files.js";

/** A configuration file setup refuses to touch (not JSON, or not shaped as documented). */
export class SetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SetupError";
  }
}

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export interface JsonFile {
  path: string;
  /** What the file held, or {} when it does not exist yet. */
  value: JsonObject;
  existed: boolean;
}

/** Reads a JSON object file; refuses (SetupError) anything that does not parse as one. */
export function readJsonObject(path: string): JsonFile {
  const text = readText(path);
  if (text === undefined) return { path, value: {}, existed: false };
  if (text.trim() === "") return { path, value: {}, existed: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SetupError(`${path} is not valid JSON (${reason}); fix it or move it aside, then run setup again.`);
  }
  if (!isObject(value)) throw new SetupError(`${path} must hold a JSON object; it was left unchanged.`);
  return { path, value, existed: true };
}

export type FileAction = "created" | "updated" | "unchanged" | "removed";

export function writeJson(file: JsonFile, value: JsonObject): FileAction {
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, `${JSON.stringify(value, null, 2)}\n`);
  return file.existed ? "updated" : "created";
}

/**
 * Writes what is left of a file once Arbeit's entries are taken out, or deletes the file when
 * nothing else is left in it (`empty`) and setup created it; a file of the user's is kept.
 */
export function writeRemainder(
  file: JsonFile,
  value: JsonObject,
  projectDir: string,
  empty: (value: JsonObject) => boolean = (v) => Object.keys(v).length === 0,
): FileAction {
  if (empty(value) && removeFile(file.path, projectDir)) return "removed";
  return writeJson(file, value);
}
