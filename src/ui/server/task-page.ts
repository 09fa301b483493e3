import { patternsOverlap } from "../../domain/reservations.js";
import type { ArbeitService } from "../../service/arbeit-service.js";
import { INCLUDE_SECTIONS, type IncludeSection } from "../../service/briefing.js";
import { plannedFiles } from "../../service/file-overlap.js";
import { reservationsNear, viewOf } from "../../service/reservations.js";
import type { TaskPageLinks, TaskPageView } from "../contract.js";
import { commitUrl, fileUrl, type ProjectRemote } from "./git-remote.js";

/**
 * GET /api/task?id=<task id>: what the task page shows, in one answer: the task with every
 * briefing section but the plain context list, the live file reservations that concern it, and
 * web links for its files and commits when the project's git remote is known.
 */

/** Every section but `context` (context_all holds it) and `progress_summary` (progress holds it). */
const PAGE_SECTIONS: IncludeSection[] = INCLUDE_SECTIONS.filter(
  (section) => section !== "context" && section !== "progress_summary",
);

/**
 * The reservations that concern a task: those made for it, and other sessions' that cover a file
 * it wrote, reserved or names in its plan or description.
 */
async function reservationsConcerning(service: ArbeitService, taskId: string) {
  return service.store.read(async (tx) => {
    const task = await tx.getTask(taskId);
    if (!task) return [];
    const now = tx.databaseNow();
    const files = (await plannedFiles(tx, [task], now)).get(task.id) ?? [];
    const near = await reservationsNear(tx, files, now);
    return near
      .filter((r) => r.task_id === task.id || files.some((path) => patternsOverlap(path, r.pattern)))
      .sort((a, b) => a.pattern.localeCompare(b.pattern) || a.id.localeCompare(b.id))
      .map(viewOf);
  });
}

/**
 * Links for the task's files and commits. A file links to the newest of the task's commits that
 * changed it (the file as the task left it), else to the remote's default branch. Recorded files
 * are relative to the project; a commit's files, and the forge's paths, to the repository.
 */
export function linksOf(
  remote: ProjectRemote,
  files: ReadonlyArray<{ file_path: string }>,
  commits: ReadonlyArray<{ sha: string; files: string[] }>,
): TaskPageLinks {
  // Built from entries, not by assignment: a file named __proto__ is a key like any other.
  const fileLinks = files.map((file) => {
    const path = `${remote.prefix}${file.file_path}`;
    const last = commits.findLast((commit) => commit.files.includes(path));
    return [file.file_path, fileUrl(remote.repo, last?.sha ?? remote.defaultRef, path)] as const;
  });
  return {
    repository: remote.repo.base,
    files: Object.fromEntries(fileLinks),
    commits: Object.fromEntries(commits.map((commit) => [commit.sha, commitUrl(remote.repo, commit.sha)])),
  };
}

export async function readTaskPage(
  service: ArbeitService,
  taskId: string,
  remote: () => Promise<ProjectRemote | null>,
): Promise<TaskPageView> {
  // Read first: the answer includes every change up to it.
  const seq = await service.store.read((tx) => tx.maxEventSeq());
  const remoteRead = remote();
  const { data: briefing } = await service.getTask({ task_id: taskId, include: PAGE_SECTIONS });
  const reservations = await reservationsConcerning(service, taskId);
  const found = await remoteRead;
  return {
    seq,
    briefing,
    reservations,
    links: found ? linksOf(found, briefing.files ?? [], briefing.commits ?? []) : null,
  };
}
