import type { Token, TokenKind } from "../../team/token-rules.js";
import type { RawRow } from "../rows.js";
import type { SqlDb } from "./database.js";
import { lockSession } from "./turns.js";

const COLUMNS = "id, name, kind, read_only, created_at, expires_at, revoked_at, last_used_at";
const INSERT = `INSERT INTO tokens (id, name, kind, read_only, hash, created_at, expires_at)
  VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;
const BY_HASH = `SELECT ${COLUMNS} FROM tokens WHERE hash = ?`;
/**
 * Whether the token with this hash is active at the given time, as tokenState has it (not revoked,
 * not expired at that time), asserted: the statement fails with a division by zero (SQLSTATE
 * 22012), aborting the transaction it runs in, unless the token is active. SQLite answers NULL
 * instead of failing, so its answer is read too (1 when active).
 */
const ASSERT_ACTIVE = `SELECT 1 / (CASE WHEN EXISTS (SELECT 1 FROM tokens WHERE hash = ? AND revoked_at IS NULL
  AND (expires_at IS NULL OR expires_at > ?)) THEN 1 ELSE 0 END) AS active`;
const LIST = `SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id`;
/** A token by id, or the live tokens of that name (a name may have several). */
const FIND = `SELECT ${COLUMNS} FROM tokens WHERE id = ? OR (name = ? AND revoked_at IS NULL) ORDER BY created_at, id`;
const REVOKE = "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL";
const TOUCH = "UPDATE tokens SET last_used_at = ? WHERE id = ?";
/**
 * The agents a session has acted as: its resume state, its live work, the claims it holds and the
 * events it wrote (a session may have written before it has any state; an idempotency record
 * always comes with the events of its write, and names no agent).
 */
const SESSION_AGENTS = `SELECT agent FROM session_state WHERE session_id = ? AND agent IS NOT NULL
  UNION SELECT agent FROM active_work WHERE session_id = ? AND stopped_at IS NULL AND agent IS NOT NULL
  UNION SELECT owner FROM tasks WHERE claim_session = ? AND deleted_at IS NULL AND owner IS NOT NULL
  UNION SELECT agent FROM events WHERE session_id = ? AND agent IS NOT NULL`;

function toToken(row: RawRow): Token {
  return {
    id: String(row.id),
    name: String(row.name),
    kind: row.kind as TokenKind,
    read_only: Number(row.read_only) === 1,
    created_at: String(row.created_at),
    expires_at: (row.expires_at as string | null) ?? null,
    revoked_at: (row.revoked_at as string | null) ?? null,
    last_used_at: (row.last_used_at as string | null) ?? null,
  };
}

/** The tokens of `arbeit serve`: stored by the hash of their secret, never the secret. */
export function tokenStatements(db: SqlDb) {
  return {
    /** Inserts the token; false when its id was taken (draw another). */
    async insertToken(token: Token, hash: string): Promise<boolean> {
      const changed = await db.run(
        INSERT,
        token.id,
        token.name,
        token.kind,
        token.read_only ? 1 : 0,
        hash,
        token.created_at,
        token.expires_at,
      );
      return changed === 1;
    },
    async tokenByHash(hash: string): Promise<Token | undefined> {
      const row = await db.get(BY_HASH, hash);
      return row && toToken(row);
    },
    /**
     * Sends ASSERT_ACTIVE: true when the token is active at `now`, false when SQLite answers that it
     * is not; on Postgres an inactive token fails the statement (see isDivisionByZero).
     */
    assertTokenActive(hash: string, now: string): Promise<boolean> {
      return db.get(ASSERT_ACTIVE, hash, now).then((row) => Number(row?.active) === 1);
    },
    async listTokens(): Promise<Token[]> {
      return (await db.all(LIST)).map(toToken);
    },
    async findTokens(idOrName: string): Promise<Token[]> {
      return (await db.all(FIND, idOrName, idOrName)).map(toToken);
    },
    /** Marks the token revoked; false when it already was. */
    async revokeToken(id: string, at: string): Promise<boolean> {
      return (await db.run(REVOKE, at, id)) === 1;
    },
    /**
     * In a write, the session's turn is taken first (lockSession): two agents acting at once in a
     * session nobody has used yet cannot both find it free, since the second reads only after the
     * first's writes committed.
     */
    async sessionAgents(session: string): Promise<string[]> {
      lockSession(db, session);
      return (await db.all(SESSION_AGENTS, session, session, session, session)).map((row) => String(row.agent));
    },
    async touchToken(id: string, at: string): Promise<void> {
      await db.run(TOUCH, at, id);
    },
  };
}

/** Whether `error` is the failure of an asserting statement such as ASSERT_ACTIVE (Postgres's division by zero). */
export function isDivisionByZero(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "22012";
}
