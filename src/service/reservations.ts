import { DEFAULT_LEASE_SECONDS, leaseUntil } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import { ARBEIT_DIR } from "../domain/project-layout.js";
import {
  coversEverything,
  type EditCheck,
  editCheckOf,
  folderPattern,
  hasWildcard,
  literalPrefix,
  ownSessions,
  patternsOverlap,
  type Reservation,
  type ReservationView,
  viewOf,
} from "../domain/reservations.js";
import { LIMITS } from "../schemas/limits.js";
import type { StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { ok, type Result, type ServiceDeps, type WriteContext } from "./operation.js";
import { projectPath } from "./project-path.js";

/**
 * File reservations (domain/reservations.ts has the matching rules): a session reserves paths or
 * globs, exclusively or shared, under a lease on the database's clock that the holder's activity
 * renews (operation.ts), that ends when its work on the task stops or the task ends, and that a
 * person may break (logged). Hosts ask `checkEdit` before an edit; planning and briefings read
 * `reservationsOverlapping`.
 */

export { type EditCheck, holderOf, type ReservationView, viewOf } from "../domain/reservations.js";

/**
 * A path or glob as given, made project-relative like a recorded file: its literal folders are
 * resolved (symlinks, `..`), its wildcard part kept as written. Null for one outside the project.
 */
export function reservedPattern(deps: Pick<ServiceDeps, "projectRoot" | "realpath">, given: string): string | null {
  const spelled = folderPattern(given.replaceAll("\\", "/"));
  if (!hasWildcard(spelled)) return projectPath(deps, spelled);
  const segments = spelled.split("/");
  const at = segments.findIndex((segment) => hasWildcard(segment));
  const literal = segments.slice(0, at).join("/");
  const rest = segments.slice(at).join("/");
  if (rest.split("/").includes("..")) return null;
  if (literal === "") return rest;
  const base = projectPath(deps, literal);
  // The project root itself: the pattern hangs off it.
  if (base === null) return projectPath(deps, `${literal}/x`) === "x" ? rest : null;
  return `${base}/${rest}`;
}

/**
 * Live reservations that could overlap any of `patterns` (callers filter with patternsOverlap):
 * the store's indexed lookup by the prefixes they can match.
 */
export function reservationsNear(tx: StoreTx, patterns: readonly string[], now: string): Promise<Reservation[]> {
  return tx.reservationsNear(patterns, now);
}

/** Live reservations of any session whose pattern could match a file `pattern` matches. */
export async function reservationsOverlapping(tx: StoreTx, pattern: string, now: string): Promise<Reservation[]> {
  return (await reservationsNear(tx, [pattern], now)).filter((r) => patternsOverlap(r.pattern, pattern));
}

function holderName(r: Reservation): string {
  return r.agent ?? r.session_id;
}

/** Another session holds what the caller asked to reserve: names each holder and when it ends. */
function fileReserved(wanted: string, held: Reservation[]): ArbeitError {
  const first = held[0]!;
  return new ArbeitError(
    "FILE_RESERVED",
    `${wanted} is reserved by ${holderName(first)} (another session, ${first.exclusive ? "exclusive" : "shared"}: ${first.pattern}${first.task_id ? ` for ${first.task_id}` : ""}) until ${first.expires_at}.`,
    {
      details: { path: wanted, holders: held.map(viewOf) },
      suggestions: [
        "Work on other files or another task (arbeit_query ready), or wait for the reservation to end.",
        "Breaking another session's reservation is a person's decision (the dashboard shows stale ones).",
      ],
    },
  );
}

/** Frees reservations whose lease ran out, recording each as reservation_expired. */
export async function sweepExpiredReservations(w: WriteContext): Promise<void> {
  for (const r of await w.tx.expiredReservations(w.databaseNow, 100)) {
    if (!(await w.tx.deleteReservation(r.id))) continue;
    await w.emit({
      event_type: "reservation_expired",
      entity_type: "reservation",
      entity_id: r.id,
      task_id: null,
      payload: { pattern: r.pattern, session: r.session_id, owner: r.agent, lease_expires_at: r.expires_at },
    });
  }
}

export type ReleaseReason = "released" | "work_stopped" | "task_finished" | "forced";

async function release(w: WriteContext, r: Reservation, reason: ReleaseReason): Promise<void> {
  if (!(await w.tx.deleteReservation(r.id))) return;
  await w.emit({
    event_type: "reservation_released",
    entity_type: "reservation",
    entity_id: r.id,
    task_id: null,
    payload: {
      pattern: r.pattern,
      reason,
      owner: r.agent,
      task_id: r.task_id,
      ...(reason === "forced" ? { session: r.session_id, lease_expires_at: r.expires_at } : {}),
    },
  });
}

/**
 * Ends the reservations made for `taskId`: those of `session` when its work there stops, every
 * session's when the task is completed or cancelled.
 */
export async function releaseReservationsOf(
  w: WriteContext,
  taskId: string,
  reason: "work_stopped" | "task_finished",
  session?: string,
): Promise<void> {
  for (const r of await w.tx.reservationsOfTask(taskId))
    if (session === undefined || r.session_id === session) await release(w, r, reason);
}

export interface ReserveInput {
  paths: string[];
  shared?: boolean | undefined;
  lease_seconds?: number | undefined;
  /** The task the reservation is for; the session's task when left out. */
  task_id: string | null;
}

export interface ReserveResult {
  reserved: ReservationView[];
  /** Others' shared reservations of the same files: the caller may edit, and is told. */
  shared_with?: ReservationView[];
}

/**
 * Reserves every path of `input` for the session, all or nothing: FILE_RESERVED (naming the
 * holders) when another session holds an overlapping exclusive reservation, or when an exclusive
 * one is asked for and another session holds any overlapping one. Reserving a pattern the session
 * already holds renews it (and changes its mode).
 */
export async function reserveFiles(w: WriteContext, input: ReserveInput): Promise<ReserveResult> {
  const { tx, session } = w;
  const exclusive = !input.shared;
  const patterns = settlePatterns(w.deps, input.paths);
  // Checked before anything is written, so a refused call reserves none of its paths.
  const given = exclusive
    ? input.paths.find((path) => coversEverything(reservedPattern(w.deps, path) ?? ""))
    : undefined;
  if (given !== undefined) {
    throw new ArbeitError(
      "RESERVATION_TOO_BROAD",
      `${JSON.stringify(given)} matches every file of the project; held exclusively it would keep every other session from editing anything, so nothing was reserved.`,
      { details: { field: "paths", path: given } },
    );
  }
  await tx.lockReservations();
  await sweepExpiredReservations(w);
  const own = ownSessions(session, w.caller.parents);
  const sharedWith = new Map<string, Reservation>();
  for (const pattern of patterns) {
    const others = (await reservationsOverlapping(tx, pattern, w.databaseNow)).filter((r) => !own.has(r.session_id));
    const blocking = others.filter((r) => r.exclusive || exclusive);
    if (blocking.length > 0) throw fileReserved(pattern, blocking);
    for (const r of others) sharedWith.set(r.id, r);
  }
  const leaseSeconds = input.lease_seconds ?? DEFAULT_LEASE_SECONDS;
  const expires_at = leaseUntil(new Date(w.databaseNow), leaseSeconds);
  const reserved: ReservationView[] = [];
  for (const pattern of patterns) {
    const row = {
      exclusive,
      agent: w.caller.agent,
      task_id: input.task_id,
      lease_seconds: leaseSeconds,
      expires_at,
    };
    const held = await tx.heldReservation(session, pattern);
    let id: string;
    if (held) {
      id = held.id;
      await tx.updateReservation(id, row);
    } else {
      id = await tx.insertReservation({
        ...row,
        pattern,
        prefix: literalPrefix(pattern),
        session_id: session,
        created_at: w.now,
      });
    }
    await w.emit({
      event_type: "files_reserved",
      entity_type: "reservation",
      entity_id: id,
      task_id: input.task_id,
      payload: { pattern, exclusive, lease_expires_at: expires_at, renewed: held !== undefined },
    });
    reserved.push(viewOf({ ...row, id, pattern, session_id: session, created_at: held?.created_at ?? w.now }));
  }
  return { reserved, ...(sharedWith.size > 0 ? { shared_with: [...sharedWith.values()].map(viewOf) } : {}) };
}

/**
 * Releases the session's reservations of `paths` (exactly as reserved). With `force`, a person
 * releases other sessions' reservations of those patterns too, each logged naming its holder.
 */
export async function releaseFiles(
  w: WriteContext,
  paths: string[],
  force: boolean | undefined,
): Promise<{ released: ReservationView[] }> {
  const patterns = settlePatterns(w.deps, paths);
  const released: ReservationView[] = [];
  for (const pattern of patterns) {
    const exact = (await reservationsOverlapping(w.tx, pattern, w.databaseNow)).filter((r) => r.pattern === pattern);
    const mine = exact.filter((r) => r.session_id === w.session);
    const others = exact.filter((r) => r.session_id !== w.session);
    if (others.length > 0 && force) {
      for (const r of others) await release(w, r, "forced");
      released.push(...others.map(viewOf));
    }
    for (const r of mine) await release(w, r, "released");
    released.push(...mine.map(viewOf));
  }
  return { released };
}

/** Each path as a project pattern, in order, once; INVALID_ARGUMENT names one outside the project. */
function settlePatterns(deps: Pick<ServiceDeps, "projectRoot" | "realpath">, paths: string[]): string[] {
  const out = new Set<string>();
  for (const given of paths) {
    if (given.length > LIMITS.file_path)
      throw new ArbeitError("FIELD_TOO_LARGE", `A path is too large (limit ${LIMITS.file_path} characters).`, {
        details: { field: "paths", limit: LIMITS.file_path },
      });
    const pattern = reservedPattern(deps, given);
    if (pattern === null || pattern === ARBEIT_DIR || pattern.startsWith(`${ARBEIT_DIR}/`))
      throw new ArbeitError(
        "INVALID_ARGUMENT",
        `${JSON.stringify(given)} is not a file or pattern inside the project; paths are relative to its root.`,
        { details: { field: "paths", path: given } },
      );
    out.add(pattern);
  }
  return [...out];
}

/**
 * May the caller edit `paths` now? A read, one indexed lookup per path: denied when another
 * session (not the caller, nor a session it was started from) holds one of them exclusively,
 * warned when only shared. Paths outside the project are nobody's.
 */
export async function checkEdit(
  deps: ServiceDeps,
  input: { paths: string[] },
  caller: Caller & { session: string },
): Promise<Result<EditCheck>> {
  const paths = input.paths.flatMap((given) => {
    const path = given.length > LIMITS.file_path ? null : reservedPattern(deps, given);
    return path === null ? [] : [path];
  });
  if (paths.length === 0) return ok({ decision: "allow", conflicts: [] });
  const near = await deps.store.read((tx) => reservationsNear(tx, paths, tx.databaseNow()));
  return ok(editCheckOf(paths, near, ownSessions(caller.session, caller.parents)));
}
