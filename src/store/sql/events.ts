import { newId } from "../../domain/ids.js";
import type { ArbeitEvent } from "../../domain/types.js";
import { toEvent } from "../rows.js";
import type { EventFilter, FreedRefusal, NewEvent } from "../task-store.js";
import type { SqlDb, SqlValue } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { CHILD_AND_DEPENDANT_IDS } from "./hierarchy.js";

const EVENT_COLUMNS = "id, timestamp, event_type, entity_type, entity_id, task_id, payload, session_id, agent";
/** On a clash of ids: SQLite draws again at once; Postgres re-runs the transaction (see appendEvent). */
const ON_CLASH = { sqlite: " ON CONFLICT (id) DO NOTHING", postgres: "" } as const;

function append(onClash: string): string {
  return `INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)${onClash} RETURNING seq`;
}

/**
 * The same insert, taking a lock first in the same statement (one round trip): the lock's row
 * is read before the new row's seq is drawn. See TxLocks.orderEvents.
 */
function appendAfter(lock: string, onClash: string): string {
  return `INSERT INTO events (${EVENT_COLUMNS})
    SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? FROM (${lock}) AS ordered${onClash} RETURNING seq`;
}
const RECENT = "SELECT * FROM events WHERE task_id = ? ORDER BY seq DESC LIMIT ?";
const CLAIM_HISTORY = `SELECT * FROM events WHERE task_id = ?
  AND event_type IN ('task_claimed', 'claim_renewed', 'claim_released', 'claim_expired', 'work_stopped')
  ORDER BY seq DESC LIMIT ?`;
const MAX_SEQ = "SELECT COALESCE(MAX(seq), 0) AS seq FROM events";
const EDIT_REFUSALS = `SELECT * FROM events WHERE entity_type = 'reservation' AND entity_id = ?
  AND event_type = 'edit_refused' ORDER BY seq LIMIT ?`;
/** Edits refused since a time, newest first, each with whether its reservation has ended since. */
const RECENT_REFUSALS = `SELECT r.*, EXISTS (SELECT 1 FROM events f WHERE f.entity_type = 'reservation'
    AND f.entity_id = r.entity_id AND f.event_type IN ('reservation_released', 'reservation_expired')) AS freed
  FROM events r WHERE r.event_type = 'edit_refused' AND r.timestamp >= ? ORDER BY r.seq DESC LIMIT ?`;
/** How many reservations that refused the session an edit ran out while still unrecorded (not yet swept). */
const REFUSALS_LAPSED = `SELECT COUNT(*) AS n FROM events r JOIN reservations res ON res.id = r.entity_id
  WHERE r.session_id = ? AND r.event_type = 'edit_refused' AND res.expires_at <= ?`;
/** The end of each reservation the session was refused an edit by, with what it was refused. */
const REFUSALS_FREED = `SELECT f.*, r.payload AS refused_payload FROM events r
  JOIN events f ON f.entity_type = 'reservation' AND f.entity_id = r.entity_id AND f.seq > r.seq
    AND f.event_type IN ('reservation_released', 'reservation_expired')
  WHERE r.session_id = ? AND r.event_type = 'edit_refused' AND f.seq > ?
  ORDER BY f.seq DESC LIMIT ?`;

/** The listed tasks, and the live children and dependants of one more (read in the same statement). */
const withBelow = (d: Dialect) => `task_id IN (${d.listRows} UNION ALL ${CHILD_AND_DEPENDANT_IDS})`;

const texts = perDialect((d) => ({
  countForTasks: `SELECT COUNT(*) AS n FROM events WHERE ${d.inList("task_id")} AND seq > ?`,
  forTasks: `SELECT * FROM events WHERE ${d.inList("task_id")} AND seq > ? ORDER BY seq DESC LIMIT ?`,
  countForTasksBelow: `SELECT COUNT(*) AS n FROM events WHERE ${withBelow(d)} AND seq > ?`,
  forTasksBelow: `SELECT * FROM events WHERE ${withBelow(d)} AND seq > ? ORDER BY seq DESC LIMIT ?`,
}));

/** The append-only event log; `seq` orders it for cursors. */
export function eventStatements(db: SqlDb) {
  const d = db.dialect;
  const sql = texts(d);
  return {
    /**
     * Appends an event; with `lock`, that lock's statement runs first in the same statement. On
     * Postgres the insert is sent at once and not waited for (SqlDb.later): the promise resolves
     * when its answer comes, so a caller that needs no seq does not wait for one. There a clash
     * of ids is a unique violation, and the transaction runs again with fresh ids.
     */
    appendEvent(event: NewEvent, lock?: string): Promise<ArbeitEvent> {
      const payload = JSON.stringify(event.payload);
      const onClash = ON_CLASH[d.name];
      const text = lock === undefined ? append(onClash) : appendAfter(lock, onClash);
      const values = (id: string): SqlValue[] => [
        id,
        event.timestamp,
        event.event_type,
        event.entity_type,
        event.entity_id,
        event.task_id,
        payload,
        event.session_id,
        event.agent,
      ];
      if (d.name === "postgres") {
        const id = newId("event");
        return db.later(text, ...values(id)).then((row) => {
          if (row === undefined) throw new Error("The event was not written.");
          return { ...event, id, seq: Number(row.seq) };
        });
      }
      return (async () => {
        for (;;) {
          const id = newId("event");
          const row = await db.get(text, ...values(id));
          if (row !== undefined) return { ...event, id, seq: Number(row.seq) };
        }
      })();
    },
    /**
     * Appends an event whose seq no one needs: on Postgres it is sent and not waited for (its
     * failure fails the transaction at COMMIT); on SQLite it is written before this resolves.
     */
    async recordEvent(event: NewEvent, lock?: string): Promise<void> {
      const appended = this.appendEvent(event, lock);
      if (d.name === "postgres") appended.catch(() => {});
      else await appended;
    },

    async claimHistory(taskId: string, limit: number): Promise<ArbeitEvent[]> {
      return (await db.all(CLAIM_HISTORY, taskId, limit)).map(toEvent);
    },

    async recentEvents(taskId: string, limit: number): Promise<ArbeitEvent[]> {
      return (await db.all(RECENT, taskId, limit)).map(toEvent).reverse();
    },

    async listEvents(filter: EventFilter): Promise<ArbeitEvent[]> {
      const where = ["seq > ?"];
      const params: SqlValue[] = [filter.after_seq];
      if (filter.task_id !== undefined) {
        where.push("task_id = ?");
        params.push(filter.task_id);
      }
      if (filter.event_types && filter.event_types.length > 0) {
        where.push(d.inList("event_type"));
        params.push(d.listParam(filter.event_types));
      }
      const rows = await db.all(
        `SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`,
        ...params,
        filter.limit,
      );
      return rows.map(toEvent);
    },

    /** The newest `limit` events after `afterSeq` on any of `taskIds`, oldest first, and how many there were. */
    async eventsForTasks(
      taskIds: readonly string[],
      afterSeq: number,
      limit: number,
      below?: string,
    ): Promise<{ total: number; events: ArbeitEvent[] }> {
      if (taskIds.length === 0 && below === undefined) return { total: 0, events: [] };
      const list = d.listParam(taskIds);
      const keys: SqlValue[] = below === undefined ? [list, afterSeq] : [list, below, afterSeq];
      // Both go out together (one round trip on Postgres).
      const counted = db.get(below === undefined ? sql.countForTasks : sql.countForTasksBelow, ...keys);
      counted.catch(() => {});
      const rows = await db.all(below === undefined ? sql.forTasks : sql.forTasksBelow, ...keys, limit);
      const total = Number((await counted)?.n ?? 0);
      return { total, events: rows.map(toEvent).reverse() };
    },

    async editRefusals(reservationId: string, limit: number): Promise<ArbeitEvent[]> {
      return (await db.all(EDIT_REFUSALS, reservationId, limit)).map(toEvent);
    },

    async recentEditRefusals(since: string, limit: number): Promise<Array<ArbeitEvent & { freed: boolean }>> {
      const rows = await db.all(RECENT_REFUSALS, since, limit);
      return rows.map((row) => ({ ...toEvent(row), freed: row.freed === true || Number(row.freed) === 1 }));
    },

    async refusalsLapsed(session: string, now: string): Promise<number> {
      return Number((await db.get(REFUSALS_LAPSED, session, now))?.n ?? 0);
    },

    async refusalsFreed(session: string, afterSeq: number, limit: number): Promise<FreedRefusal[]> {
      const rows = await db.all(REFUSALS_FREED, session, afterSeq, limit);
      return rows
        .map((row) => ({
          ended: toEvent(row),
          refused: JSON.parse(row.refused_payload as string) as Record<string, unknown>,
        }))
        .reverse();
    },

    async maxEventSeq(): Promise<number> {
      return Number((await db.get(MAX_SEQ))?.seq ?? 0);
    },
  };
}
