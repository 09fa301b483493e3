import { namedPaths, patternsOverlap, type Reservation } from "../domain/reservations.js";
import type { FileAssociation, Task } from "../domain/types.js";
import type { ReadyWithFiles } from "../store/sql/ready.js";
import type { HeldTask } from "../store/sql/reservations.js";
import type { ReadyFilter, StoreTx, TaskKey } from "../store/task-store.js";
import { type ReservationView, reservationsNear, viewOf } from "./reservations.js";

/**
 * Which tasks share files, for planning: two tasks that touched or plan to touch the same files
 * are not offered as parallel work to two sessions. A task's files are those it wrote, those
 * reserved for it, and the paths its plan or description names.
 */

type Planned = Pick<Task, "id" | "plan" | "description">;

/**
 * The paths a text names, remembered by the text: the tasks others hold are asked about at every
 * claim and every ready list, and their plans rarely change, while reading paths out of a long
 * plan costs far more than finding it again. Bounded: the oldest are forgotten first.
 */
const NAMED = new Map<string, readonly string[]>();
const NAMED_KEPT = 4_000;
function pathsNamed(text: string | null): readonly string[] {
  if (!text) return [];
  let paths = NAMED.get(text);
  if (paths === undefined) {
    paths = namedPaths(text);
    if (NAMED.size >= NAMED_KEPT) NAMED.delete(NAMED.keys().next().value!);
    NAMED.set(text, paths);
  }
  return paths;
}

/** Each task's files and patterns (written, reserved for it, named in its plan or description). */
export async function plannedFiles(
  tx: StoreTx,
  tasks: readonly Planned[],
  now: string,
): Promise<Map<string, string[]>> {
  const files = new Map<string, Set<string>>(tasks.map((task) => [task.id, new Set()]));
  const ids = tasks.map((task) => task.id);
  // Both reads are sent at once: one round trip on Postgres.
  const [written, reserved] = await Promise.all([tx.writtenFiles(ids), tx.reservedFor(ids, now)]);
  for (const row of written) files.get(row.task_id)?.add(row.file_path);
  for (const row of reserved) files.get(row.task_id)?.add(row.pattern);
  for (const task of tasks)
    for (const path of [...pathsNamed(task.plan), ...pathsNamed(task.description)]) files.get(task.id)!.add(path);
  return new Map([...files].map(([id, set]) => [id, [...set].sort()]));
}

/** The files of `a` that could be files of `b`. */
export function sharedFiles(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((x) => b.some((y) => patternsOverlap(x, y)));
}

/** Why a task is kept apart: the task (or reservation) of another session it shares files with. */
export interface KeptApart {
  task_id: string;
  /** The other session's task, when the files are its; absent for a reservation made for no task. */
  with_task?: string;
  held_by: string;
  files: string[];
}

/** What other sessions hold now, read beside the ready tasks: their tasks and the live reservations. */
export interface OthersWork {
  /**
   * Unfinished tasks another session holds a live claim on, with the files stored for each. Asked
   * with the ready read where statements travel together (Postgres); elsewhere only when some
   * candidate has files to compare, since a task with none shares none.
   */
  held(): Promise<HeldTask[]>;
  /**
   * Every live reservation (any session's), by id; null when there are more than are read at
   * once: those near the candidates' files are then looked up once the candidates are known.
   */
  reservations: Reservation[] | null;
  /** Some claim's lease has run out: a claim sweeps before it takes the best ready task. */
  lapsed: boolean;
}

/** Live reservations read whole with the ready tasks; past this many, those near are looked up. */
const RESERVATIONS_READ = 200;

/**
 * The work other sessions hold now. Both reads are sent at once and need no answer of the ready
 * read, so on Postgres they share its round trip.
 */
export function othersWork(tx: StoreTx, own: ReadonlySet<string>, now: string): Promise<OthersWork> {
  const [session] = own;
  let heldRead: Promise<HeldTask[]> | undefined;
  const held = () =>
    (heldRead ??= tx
      .heldByOthers(session ?? null, now)
      .then((tasks) => tasks.filter((task) => task.claim_session === null || !own.has(task.claim_session))));
  // Up to 200 tasks with their files: free to ask early where it shares the ready read's round
  // trip, a millisecond or two of work where each statement runs as it is issued (SQLite).
  if (tx.batchesStatements) held().catch(() => {});
  const liveRead = tx.liveAndLapsed(now, RESERVATIONS_READ);
  return liveRead.then((live) => ({
    held,
    reservations: live.complete ? live.reservations : null,
    lapsed: live.lapsed,
  }));
}

/** A task's files from what is known of it: those stored for it and the paths its plan and description name. */
function filesOf(task: Planned, stored: readonly string[]): string[] {
  const files = new Set(stored);
  for (const path of [...pathsNamed(task.plan), ...pathsNamed(task.description)]) files.add(path);
  return [...files].sort();
}

/**
 * Of `candidates`, those that share files with work another session holds now: a task it has
 * claimed, or a live reservation of its.
 */
export async function keptApart(
  tx: StoreTx,
  candidates: readonly ReadyWithFiles[],
  own: ReadonlySet<string>,
  now: string,
  others: OthersWork,
): Promise<Map<string, KeptApart>> {
  const apart = new Map<string, KeptApart>();
  if (candidates.length === 0) return apart;
  const files = new Map(candidates.map(({ task, stored_files }) => [task.id, filesOf(task, stored_files)]));
  // A task with no files shares none: when no candidate has any, nothing else need be read.
  if ([...files.values()].every((paths) => paths.length === 0)) return apart;
  const held = await others.held();
  // Nobody else holds a task, and there is no live reservation at all: the common case of one agent.
  if (held.length === 0 && others.reservations?.length === 0) return apart;
  const heldFiles = new Map(held.map((task) => [task.id, filesOf(task, task.stored_files)]));
  // Too many live reservations to read whole: one lookup of those any candidate's file could touch.
  const nearby = others.reservations ?? (await reservationsNear(tx, [...new Set([...files.values()].flat())], now));
  for (const { task } of candidates) {
    const mine = files.get(task.id) ?? [];
    if (mine.length === 0) continue;
    const clash = held.find((other) => other.id !== task.id && sharedFiles(mine, heldFiles.get(other.id)!).length > 0);
    if (clash) {
      const shared = sharedFiles(mine, heldFiles.get(clash.id)!);
      apart.set(task.id, {
        task_id: task.id,
        with_task: clash.id,
        // A claim always names its owner; a session-less lease without one is another caller's.
        held_by: clash.owner ?? clash.claim_session ?? "another caller",
        files: shared,
      });
      continue;
    }
    const reserved = nearby.find(
      (r) => !own.has(r.session_id) && r.task_id !== task.id && mine.some((path) => patternsOverlap(path, r.pattern)),
    );
    if (reserved) {
      apart.set(task.id, {
        task_id: task.id,
        ...(reserved.task_id ? { with_task: reserved.task_id } : {}),
        held_by: reserved.agent ?? reserved.session_id,
        files: mine.filter((path) => patternsOverlap(path, reserved.pattern)),
      });
    }
  }
  return apart;
}

/**
 * Pairs among `tasks` (one layer of parallel_groups) that share files, with the files: they can
 * run side by side only if they do not both edit those.
 */
export function pairsSharingFiles(
  tasks: readonly string[],
  files: ReadonlyMap<string, string[]>,
): Array<{ tasks: [string, string]; files: string[] }> {
  const pairs: Array<{ tasks: [string, string]; files: string[] }> = [];
  for (let i = 0; i < tasks.length; i++)
    for (let j = i + 1; j < tasks.length; j++) {
      const shared = sharedFiles(files.get(tasks[i]!) ?? [], files.get(tasks[j]!) ?? []);
      if (shared.length > 0) pairs.push({ tasks: [tasks[i]!, tasks[j]!], files: shared });
    }
  return pairs;
}

/**
 * Ready tasks (as tx.readyTasks gives them) without those that share files with work another
 * session holds now, which go to `apart`; reads on past them, a few pages at most, to fill `limit`.
 */
export async function readyWithoutSharedFiles(
  tx: StoreTx,
  filter: Omit<ReadyFilter, "limit" | "offset" | "after">,
  /** The caller's session first, then those it was started from: their work is the caller's own. */
  sessions: readonly [string, ...string[]],
  limit: number,
  after: TaskKey | undefined,
  apart: KeptApart[],
  /** Who else holds what, when the caller has asked already (othersWork). */
  others?: Promise<OthersWork>,
): Promise<Task[]> {
  const own = new Set(sessions);
  const out: Task[] = [];
  let from = after;
  // Who else holds what is asked beside the first page of ready tasks, not after it; each ready
  // task comes with its stored files, so that deciding costs no further wait.
  const holding = others ?? othersWork(tx, own, filter.now);
  holding.catch(() => {});
  for (let round = 0; round < 5 && out.length < limit; round++) {
    const batch = await tx.readyWithFiles({ ...filter, limit, offset: 0, after: from });
    const held = await keptApart(tx, batch, own, filter.now, await holding);
    for (const { task } of batch) {
      const why = held.get(task.id);
      if (why) apart.push(why);
      else if (out.length < limit) out.push(task);
    }
    if (batch.length < limit) break;
    const last = batch.at(-1)!.task;
    from = [last.priority, last.created_at, last.id];
  }
  return out;
}

/**
 * The reservations a briefing names for the session's task: the session's own, and other
 * sessions' covering files the task wrote, reserved or plans to touch. `written` is the task's
 * file associations, which the briefing reads anyway.
 */
export async function reservationsConcerning(
  tx: StoreTx,
  session: string,
  task: Planned | null,
  written: Promise<readonly FileAssociation[]>,
  now: string,
): Promise<ReservationView[]> {
  const { anyLive, own, othersForTask } = await tx.reservationsAround(session, task?.id ?? null, now);
  // No live reservation anywhere: none covers the task's files, and nothing more is asked.
  if (task === null || !anyLive) return own.map(viewOf);
  const stored = [
    ...(await written).flatMap((file) => (file.operation === "write" ? [file.file_path] : [])),
    ...[...own, ...othersForTask].flatMap((r) => (r.task_id === task.id ? [r.pattern] : [])),
  ];
  const files = filesOf(task, stored);
  const seen = new Set(own.map((r) => r.id));
  const others = (await reservationsNear(tx, files, now)).filter(
    (r) => !seen.has(r.id) && files.some((path) => patternsOverlap(path, r.pattern)),
  );
  return [...own, ...others].map(viewOf);
}
