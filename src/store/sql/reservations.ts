import { hasWildcard, literalPrefix, prefixesOf, type Reservation } from "../../domain/reservations.js";
import type { RawRow } from "../rows.js";
import type { SqlDb } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { insertWithId } from "./insert.js";

const COLUMNS = "id, pattern, exclusive, session_id, agent, task_id, lease_seconds, expires_at, created_at";

/**
 * `at` plus the row's own lease_seconds, as ISO text on the database's clock: where the engines
 * part is date arithmetic alone.
 */
export function plusLease(d: Dialect, at: string, seconds: string): string {
  return d.name === "sqlite"
    ? `strftime('%Y-%m-%dT%H:%M:%fZ', ${at}, '+' || ${seconds} || ' seconds')`
    : `to_char((${at}::timestamptz + ${seconds} * interval '1 second') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * The files stored for the task `alias` (those it wrote, the patterns of live reservations made
 * for it) as a JSON array column, `stored_files`: planning (file-overlap.ts) reads them with the
 * task in the same statement instead of asking for them once the task is known. One parameter:
 * the time reservations are live at; none `withReserved` false (the written files only).
 * Postgres aggregates no rows to NULL, SQLite to `[]`.
 */
export function storedFilesColumn(d: Dialect, alias: string, withReserved = true): string {
  const reserved = withReserved
    ? `UNION SELECT rv.pattern AS path FROM reservations rv WHERE rv.task_id = ${alias}.id AND rv.expires_at > ?`
    : "";
  return `(SELECT ${d.jsonArray("f.path", "f.path")} FROM (
      SELECT fa.file_path AS path FROM file_associations fa WHERE fa.task_id = ${alias}.id AND fa.operation = 'write'
      ${reserved}) f) AS stored_files`;
}

/** The stored_files column as read: its paths and patterns. */
export function storedFilesOf(row: RawRow): string[] {
  const text = row.stored_files as string | null | undefined;
  return text ? (JSON.parse(text) as string[]) : [];
}

const texts = perDialect((d) => ({
  // Reservers take turns (SQLite's writer already runs alone): two sessions that each find no
  // conflict cannot both go on to insert. Renewals and releases do not wait for it.
  lock:
    d.name === "postgres" ? "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.arbeit_reservations'))" : null,
  atPrefixes: `SELECT ${COLUMNS} FROM reservations WHERE ${d.inList("prefix")} AND expires_at > ? ORDER BY id`,
  under: `SELECT ${COLUMNS} FROM reservations WHERE prefix >= ? AND prefix < ? AND expires_at > ? ORDER BY id`,
  writtenFiles: `SELECT DISTINCT task_id, file_path FROM file_associations
    WHERE ${d.inList("task_id")} AND operation = 'write' ORDER BY task_id, file_path`,
  reservedFor: `SELECT task_id, pattern FROM reservations WHERE ${d.inList("task_id")} AND expires_at > ?
    ORDER BY task_id, pattern`,
  // Unfinished tasks held under a live lease by anyone but the caller's session (a lease taken
  // without a session included): the work under way elsewhere, with the files stored for each,
  // the newest leases first. The session test is null-safe on purpose: a plain `<>` implies the
  // session is set, which lets Postgres walk idx_tasks_claim_session through every claimed task
  // and sort them, where reading idx_tasks_lease backwards stops at the 200th.
  // Only the files each wrote (no parameter): the live reservations made for them are read whole
  // beside them (or looked up near the candidates' files), so looking them up per held task again
  // cost a lookup each for nothing.
  heldByOthers: `SELECT t.id, t.owner, t.claim_session, t.plan, t.description, ${storedFilesColumn(d, "t", false)}
    FROM tasks t ${d.indexedBy("idx_tasks_lease")}
    WHERE t.deleted_at IS NULL AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at > ?
      AND t.claim_session ${d.distinct} ? AND t.status IN ('open', 'in_progress')
    ORDER BY t.lease_expires_at DESC, t.id LIMIT 200`,
  // The live reservations, the first `limit` by id, beside whether any claim's lease has run out
  // (what a claim's sweep would free): one row of NULLs when there is no live reservation. A
  // claim asks both with the ready read, so that neither costs a wait of its own.
  liveAndLapsed: `SELECT x.lapsed, r.* FROM (SELECT EXISTS (SELECT 1 FROM tasks ${d.indexedBy("idx_tasks_lease")}
      WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?) AS lapsed) x
    LEFT JOIN (SELECT ${COLUMNS} FROM reservations WHERE expires_at > ? ORDER BY id LIMIT ?) r ON 1 = 1
    ORDER BY r.id`,
  // What a briefing names (the session's own live reservations, others' made for its task) beside
  // whether any reservation is live at all: one row of NULLs when there is none of either kind.
  concerning: `SELECT x.any_live, r.* FROM (SELECT EXISTS (SELECT 1 FROM reservations WHERE expires_at > ?) AS any_live) x
    LEFT JOIN (SELECT ${COLUMNS} FROM reservations WHERE session_id = ? AND expires_at > ?
      UNION ALL SELECT ${COLUMNS} FROM reservations WHERE task_id = ? AND session_id <> ? AND expires_at > ?) r ON 1 = 1
    ORDER BY r.pattern, r.id`,
  // Renewal by activity: each of the session's live reservations runs its own lease length from
  // now again; only ever forward.
  renew: `UPDATE reservations SET expires_at = ${plusLease(d, "?", "lease_seconds")}
    WHERE session_id = ? AND expires_at > ? AND expires_at < ${plusLease(d, "?", "lease_seconds")}`,
}));

/** The read of the tasks held elsewhere, as sent. Exported for EXPLAIN (a test checks its plan). */
export function heldByOthersSql(d: Dialect): string {
  return texts(d).heldByOthers;
}

// A live conversation's heartbeat, as for claims: every live reservation runs until the given time.
const BEAT = "UPDATE reservations SET expires_at = ?, lease_seconds = ? WHERE session_id = ? AND expires_at > ?";

const HELD = `SELECT ${COLUMNS} FROM reservations WHERE session_id = ? AND pattern = ?`;
const OF_SESSION = `SELECT ${COLUMNS} FROM reservations WHERE session_id = ? AND expires_at > ? ORDER BY pattern`;
const OF_TASK = `SELECT ${COLUMNS} FROM reservations WHERE task_id = ? ORDER BY pattern, id`;
const LIVE = `SELECT ${COLUMNS} FROM reservations WHERE expires_at > ? AND (pattern, id) > (?, ?)
  ORDER BY pattern, id LIMIT ?`;
const COUNT_LIVE = "SELECT COUNT(*) AS n FROM reservations WHERE expires_at > ?";
const EXPIRED = `SELECT ${COLUMNS} FROM reservations WHERE expires_at <= ? ORDER BY expires_at, id LIMIT ?`;
const UPDATE = `UPDATE reservations SET exclusive = ?, agent = ?, task_id = ?, lease_seconds = ?, expires_at = ?
  WHERE id = ?`;
const DELETE = "DELETE FROM reservations WHERE id = ?";

function toReservation(row: RawRow): Reservation {
  return {
    id: row.id as string,
    pattern: row.pattern as string,
    exclusive: Number(row.exclusive) === 1,
    session_id: row.session_id as string,
    agent: (row.agent as string | null) ?? null,
    task_id: (row.task_id as string | null) ?? null,
    lease_seconds: Number(row.lease_seconds),
    expires_at: row.expires_at as string,
    created_at: row.created_at as string,
  };
}

/** A task another session holds, with what planning reads of it. */
export interface HeldTask {
  id: string;
  owner: string | null;
  /** Null for a lease taken without a session. */
  claim_session: string | null;
  plan: string | null;
  description: string | null;
  /**
   * The files it wrote. The live reservations made for it are not repeated here: planning reads
   * the live reservations beside the held tasks and compares them as well.
   */
  stored_files: string[];
}

/** Others' live reservations (at most as many as asked), and whether a claim's lease ran out. */
export interface LiveAndLapsed {
  /** By id; `complete` is false when there were more than were asked for. */
  reservations: Reservation[];
  complete: boolean;
  /** Some task still names an owner whose lease has run out (a sweep would free it). */
  lapsed: boolean;
}

/** What a briefing asks of the reservations at once (reservationsAround). */
export interface ReservationsAround {
  anyLive: boolean;
  /** The session's own live reservations, by pattern. */
  own: Reservation[];
  /** Other sessions' live reservations made for the task. */
  othersForTask: Reservation[];
}

export type NewReservation = Omit<Reservation, "id"> & { prefix: string };

/** File reservations: who holds which path or glob, until when (see domain/reservations.ts). */
export function reservationStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  const atPrefixes = async (prefixes: readonly string[], now: string): Promise<Reservation[]> =>
    (await db.all(sql.atPrefixes, db.dialect.listParam(prefixes), now)).map(toReservation);
  const under = async (folder: string, now: string): Promise<Reservation[]> => {
    // "/" + 1 is "0": every text starting `folder/` sorts between the two bounds.
    const [low, high] = folder === "" ? ["", "\u{10FFFF}"] : [`${folder}/`, `${folder}0`];
    return (await db.all(sql.under, low, high, now)).map(toReservation);
  };
  return {
    /** The files each of `taskIds` wrote, per task. */
    async writtenFiles(taskIds: readonly string[]): Promise<Array<{ task_id: string; file_path: string }>> {
      if (taskIds.length === 0) return [];
      return (await db.all(sql.writtenFiles, db.dialect.listParam(taskIds))) as Array<{
        task_id: string;
        file_path: string;
      }>;
    },

    /** The live reservations made for each of `taskIds`, per task. */
    async reservedFor(taskIds: readonly string[], now: string): Promise<Array<{ task_id: string; pattern: string }>> {
      if (taskIds.length === 0) return [];
      return (await db.all(sql.reservedFor, db.dialect.listParam(taskIds), now)) as Array<{
        task_id: string;
        pattern: string;
      }>;
    },

    /** Unfinished tasks held under a live claim by anyone but `session` (at most 200). */
    async heldByOthers(session: string | null, now: string): Promise<HeldTask[]> {
      return (await db.all(sql.heldByOthers, now, session)).map((row) => ({
        id: row.id as string,
        owner: (row.owner as string | null) ?? null,
        claim_session: (row.claim_session as string | null) ?? null,
        plan: (row.plan as string | null) ?? null,
        description: (row.description as string | null) ?? null,
        stored_files: storedFilesOf(row),
      }));
    },

    /** The first `limit` live reservations by id, and whether any claim's lease has run out at `now`. */
    async liveAndLapsed(now: string, limit: number): Promise<LiveAndLapsed> {
      const rows = await db.all(sql.liveAndLapsed, now, now, limit + 1);
      const found = rows.filter((row) => row.id !== null && row.id !== undefined).map(toReservation);
      return {
        reservations: found.slice(0, limit),
        complete: found.length <= limit,
        lapsed: Boolean(Number(rows[0]?.lapsed ?? 0)),
      };
    },

    /**
     * The session's live reservations, other sessions' live reservations made for `taskId`, and
     * whether any reservation is live at all (most stores have none, and then nothing more is
     * asked): one statement.
     */
    async reservationsAround(session: string, taskId: string | null, now: string): Promise<ReservationsAround> {
      const rows = await db.all(sql.concerning, now, session, now, taskId, session, now);
      const found = rows.filter((row) => row.id !== null && row.id !== undefined).map(toReservation);
      return {
        anyLive: Boolean(Number(rows[0]?.any_live ?? 0)),
        own: found.filter((r) => r.session_id === session),
        othersForTask: found.filter((r) => r.session_id !== session),
      };
    },

    /** Serialises this transaction with every other that reserves (a no-op where writers run alone). */
    async lockReservations(): Promise<void> {
      if (sql.lock) await db.get(sql.lock);
    },

    /** Live reservations whose prefix is one of `prefixes`. */
    reservationsAtPrefixes: atPrefixes,

    /**
     * Live reservations that could overlap any of `patterns` (callers filter with
     * patternsOverlap): one indexed lookup of the prefixes they can match, plus, for each pattern
     * with a wildcard, those below its literal folders. Never a scan of every reservation.
     */
    async reservationsNear(patterns: readonly string[], now: string): Promise<Reservation[]> {
      if (patterns.length === 0) return [];
      const prefixes = new Set(patterns.flatMap((pattern) => prefixesOf(literalPrefix(pattern))));
      const found = await atPrefixes([...prefixes], now);
      const seen = new Set(found.map((r) => r.id));
      for (const pattern of patterns.filter(hasWildcard))
        for (const r of await under(literalPrefix(pattern), now))
          if (!seen.has(r.id)) {
            seen.add(r.id);
            found.push(r);
          }
      return found;
    },

    /** Live reservations whose prefix lies below the folder `folder` ("" for the whole project). */
    reservationsUnder: under,

    /** The session's reservation of exactly `pattern`, live or not. */
    async heldReservation(session: string, pattern: string): Promise<Reservation | undefined> {
      const row = await db.get(HELD, session, pattern);
      return row ? toReservation(row) : undefined;
    },

    async reservationsOfSession(session: string, now: string): Promise<Reservation[]> {
      return (await db.all(OF_SESSION, session, now)).map(toReservation);
    },

    /** Every reservation made for the task, live or run out. */
    async reservationsOfTask(taskId: string): Promise<Reservation[]> {
      return (await db.all(OF_TASK, taskId)).map(toReservation);
    },

    /** A page of live reservations in (pattern, id) order, after `after`. */
    async liveReservations(
      now: string,
      limit: number,
      after: readonly [pattern: string, id: string] = ["", ""],
    ): Promise<Reservation[]> {
      return (await db.all(LIVE, now, after[0], after[1], limit)).map(toReservation);
    },

    async countLiveReservations(now: string): Promise<number> {
      return Number((await db.get(COUNT_LIVE, now))?.n ?? 0);
    },

    async expiredReservations(now: string, limit: number): Promise<Reservation[]> {
      return (await db.all(EXPIRED, now, limit)).map(toReservation);
    },

    async insertReservation(r: NewReservation): Promise<string> {
      return insertWithId(
        db,
        "reservation",
        "reservations",
        [
          "pattern",
          "prefix",
          "exclusive",
          "session_id",
          "agent",
          "task_id",
          "lease_seconds",
          "expires_at",
          "created_at",
        ],
        [
          r.pattern,
          r.prefix,
          r.exclusive ? 1 : 0,
          r.session_id,
          r.agent,
          r.task_id,
          r.lease_seconds,
          r.expires_at,
          r.created_at,
        ],
      );
    },

    async updateReservation(
      id: string,
      r: Pick<Reservation, "exclusive" | "agent" | "task_id" | "lease_seconds" | "expires_at">,
    ): Promise<void> {
      await db.run(UPDATE, r.exclusive ? 1 : 0, r.agent, r.task_id, r.lease_seconds, r.expires_at, id);
    },

    /** Deletes the reservation; false when another transaction did first. */
    async deleteReservation(id: string): Promise<boolean> {
      return (await db.run(DELETE, id)) > 0;
    },

    /** The holder's activity: its live reservations run their lease again from `now`. */
    async renewReservations(session: string, now: string): Promise<number> {
      return db.run(sql.renew, now, session, now, now);
    },

    /** A heartbeat of `session`: its live reservations at `now` run until `until`; how many. */
    async beatReservations(session: string, now: string, until: string, seconds: number): Promise<number> {
      return db.run(BEAT, until, seconds, session, now);
    },

    /** renewReservations when nothing reads the count: sent with the transaction's COMMIT. */
    renewReservationsLater(session: string, now: string): void {
      db.later(sql.renew, now, session, now, now);
    },
  };
}

export type ReservationStatements = ReturnType<typeof reservationStatements>;
