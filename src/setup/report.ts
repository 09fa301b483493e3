import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ARBEIT_DIR, DB_FILE } from "../domain/project-layout.js";
import { initProject, locate } from "../service/project.js";
import { checkWritable } from "./files.js";
import type { FileAction } from "./json-file.js";

/** What a setup run did, file by file, for people (text) and scripts (JSON). */
export interface SetupReport {
  target: "claude" | "opencode" | "git";
  /** Setting the host up, or taking out what setting up added (--remove). */
  mode: "setup" | "remove";
  /** The project directory the files were written in. */
  dir: string;
  files: Array<{ path: string; action: FileAction; detail?: string }>;
  notes: string[];
}

export function newReport(
  target: SetupReport["target"],
  dir: string,
  mode: SetupReport["mode"] = "setup",
): SetupReport {
  return { target, mode, dir, files: [], notes: [] };
}

export function record(report: SetupReport, path: string, action: FileAction, detail?: string): void {
  report.files.push({ path: relative(report.dir, path) || path, action, ...(detail ? { detail } : {}) });
}

/** Where setup writes: --dir, else the Arbeit project around the cwd, else the cwd itself. */
export function projectDir(cwd: string, dir?: string): string {
  if (dir) return resolve(cwd, dir);
  return locate({ cwd })?.root ?? resolve(cwd);
}

/** What --remove leaves in place, said every time so nobody expects their tasks gone. */
export function noteDatabaseKept(report: SetupReport): void {
  if (!existsSync(join(report.dir, ARBEIT_DIR))) return;
  report.notes.push("The Arbeit database (.arbeit/) was kept, with every task.");
}

/**
 * Refuses, before any file is written, a project where setup could not create the database it
 * creates last (`.arbeit` a file, or a link to nowhere): the files written before it would stay.
 */
export function checkStoreCreatable(dir: string): void {
  if (!locate({ cwd: dir })) checkWritable(join(dir, ARBEIT_DIR, DB_FILE), dir);
}

/** Hooks and tools do nothing without a database, so setup creates one where none is found. */
export async function ensureInitialized(report: SetupReport): Promise<void> {
  if (locate({ cwd: report.dir })) return;
  const { path } = await initProject({ cwd: report.dir });
  record(report, path, "created", "Arbeit database");
}
