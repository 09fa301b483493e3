import { newId } from "../../domain/ids.js";
import type { ArbeitEvent, EventType, MemoryEntry, MemoryScope } from "../../domain/types.js";
import { toEvent, toMemory } from "../rows.js";
import type { StoreTx } from "../task-store.js";
import type { SqlDb, SqlValue } from "./database.js";
import { perDialect } from "./dialect.js";
import { takeTurn } from "./turns.js";

const LIVE = "(expires_at IS NULL OR expires_at > ?)";
const GET = "SELECT * FROM memory WHERE scope = ? AND scope_id = ? AND key = ?";
const GET_LIVE = `SELECT * FROM memory WHERE scope = ? AND scope_id = ? AND key = ? AND ${LIVE}`;
const lockLive = perDialect((d) => `${GET_LIVE}${d.forUpdate("memory")}`);
// `reinforced + 1` in SQL, not a count read earlier: concurrent sets of one key each count.
const REINFORCE =
  "UPDATE memory SET value = ?, expires_at = ?, updated_at = ?, reinforced = reinforced + 1 WHERE id = ?";
// A key whose expiry has passed (but was not swept yet) is set as new: its past does not count.
const RENEW = `UPDATE memory SET value = ?, expires_at = ?, updated_at = ?, reinforced = 1, created_at = ?
  WHERE id = ?`;
const COUNT = `SELECT COUNT(*) AS n FROM memory WHERE scope = ? AND scope_id = ? AND ${LIVE}`;
const WEAKEST = `SELECT * FROM memory WHERE scope = ? AND scope_id = ? AND ${LIVE}
  ORDER BY reinforced, updated_at, key LIMIT ?`;
const INSERT = `INSERT INTO memory (id, scope, scope_id, key, value, expires_at, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;
const DELETE = "DELETE FROM memory WHERE scope = ? AND scope_id = ? AND key = ? RETURNING id";
const SWEEP = "DELETE FROM memory WHERE expires_at IS NOT NULL AND expires_at <= ?";
const SWEEP_SCOPE = `${SWEEP} AND scope = ? AND scope_id = ?`;
const REPLACE = `UPDATE memory SET value = ?, expires_at = ?, reinforced = ?, created_at = ?, updated_at = ?
  WHERE scope = ? AND scope_id = ? AND key = ? AND ${LIVE}`;
const ORDER = {
  key: "scope, scope_id, key",
  strength: "reinforced DESC, updated_at DESC, scope, scope_id, key",
} as const;

/** Scoped key/value memory with optional expiry. */
export function memoryStatements(db: SqlDb) {
  return {
    async memoryGet(scope: MemoryScope, scopeId: string, key: string, now: string): Promise<MemoryEntry | undefined> {
      const row = await db.get(db.writable ? lockLive(db.dialect) : GET_LIVE, scope, scopeId, key, now);
      return row ? toMemory(row) : undefined;
    },

    async memoryList(filter: Parameters<StoreTx["memoryList"]>[0]): Promise<MemoryEntry[]> {
      if (filter.scopes.length === 0) return [];
      const scopeClause = filter.scopes.map(() => "(scope = ? AND scope_id = ?)").join(" OR ");
      const params: SqlValue[] = filter.scopes.flatMap(({ scope, scope_id }) => [scope, scope_id]);
      let prefixClause = "";
      if (filter.prefix) {
        // substr rather than LIKE: keys may hold % and _ literally. Both engines count characters
        // in length() and substr(), where JS .length counts UTF-16 units (2 for an emoji).
        prefixClause = "AND substr(key, 1, length(?)) = ?";
        params.push(filter.prefix, filter.prefix);
      }
      const rows = await db.all(
        `SELECT * FROM memory WHERE (${scopeClause}) ${prefixClause} AND ${LIVE}
         ORDER BY ${ORDER[filter.order ?? "key"]} LIMIT ?`,
        ...params,
        filter.now,
        filter.limit,
      );
      return rows.map(toMemory);
    },

    /**
     * In a write, the scope's turn is taken first: writers adding keys to one scope at once count
     * its entries in turn, each after the one before made room, so the scope never holds more
     * than its limit.
     */
    async memoryCount(scope: MemoryScope, scopeId: string, now: string): Promise<number> {
      takeTurn(db, "memoryScope", `${scope}/${scopeId}`);
      return Number((await db.get(COUNT, scope, scopeId, now))?.n ?? 0);
    },

    async memoryWeakest(scope: MemoryScope, scopeId: string, now: string, limit: number): Promise<MemoryEntry[]> {
      return (await db.all(WEAKEST, scope, scopeId, now, limit)).map(toMemory);
    },

    async memoryUpsert(entry: Parameters<StoreTx["memoryUpsert"]>[0]): Promise<MemoryEntry> {
      const value = JSON.stringify(entry.value);
      const existing = await db.get(GET, entry.scope, entry.scope_id, entry.key);
      if (existing) {
        const expiry = existing.expires_at as string | null;
        if (expiry === null || expiry > entry.at) {
          await db.run(REINFORCE, value, entry.expires_at, entry.at, existing.id as string);
        } else {
          await db.run(RENEW, value, entry.expires_at, entry.at, entry.at, existing.id as string);
        }
      } else {
        for (;;) {
          const id = newId("memory");
          const inserted = await db.run(
            INSERT,
            id,
            entry.scope,
            entry.scope_id,
            entry.key,
            value,
            entry.expires_at,
            entry.at,
            entry.at,
          );
          if (inserted === 1) break;
        }
      }
      return toMemory((await db.get(GET, entry.scope, entry.scope_id, entry.key))!);
    },

    /** Deletes the entry; returns its id, or undefined when there was none. */
    async memoryDelete(scope: MemoryScope, scopeId: string, key: string): Promise<string | undefined> {
      return (await db.get(DELETE, scope, scopeId, key))?.id as string | undefined;
    },

    async memoryReplace(entry: Parameters<StoreTx["memoryReplace"]>[0]): Promise<MemoryEntry | undefined> {
      const { scope, scope_id, key, at } = entry;
      const value = JSON.stringify(entry.value);
      const changed = await db.run(
        REPLACE,
        value,
        entry.expires_at,
        entry.reinforced,
        entry.created_at,
        at,
        scope,
        scope_id,
        key,
        at,
      );
      return changed === 1 ? toMemory((await db.get(GET, scope, scope_id, key))!) : undefined;
    },

    // By the index on events (session_id, agent): a session's events are read without the whole log.
    async sessionEvents(session: string, eventTypes: readonly EventType[], limit: number): Promise<ArbeitEvent[]> {
      const d = db.dialect;
      const rows = await db.all(
        `SELECT * FROM events WHERE session_id = ? AND ${d.inList("event_type")} ORDER BY seq DESC LIMIT ?`,
        session,
        d.listParam(eventTypes as readonly string[]),
        limit,
      );
      return rows.map(toEvent);
    },

    /** Deletes entries whose expiry has passed, everywhere or in one scope; returns how many. */
    memorySweep(now: string, only?: { scope: MemoryScope; scope_id: string }): Promise<number> {
      return only ? db.run(SWEEP_SCOPE, now, only.scope, only.scope_id) : db.run(SWEEP, now);
    },
  };
}
