import { createHash, randomBytes } from "node:crypto";
import { ArbeitError } from "../domain/errors.js";
import { newId } from "../domain/ids.js";
import type { SqlDb, SqlStore } from "../store/sql/database.js";
import { eventStatements } from "../store/sql/events.js";
import { isDivisionByZero, tokenStatements } from "../store/sql/tokens.js";
import { type Token, type TokenKind, tokenNameProblem, tokenSelector, tokenState, tokensNamed } from "./token-rules.js";

/**
 * Making, listing, revoking and checking the tokens of `arbeit serve`. Whoever can open the store
 * directly is its administrator: these run on the store, never over the service.
 */

/** Every secret starts so, which tells a reader (and a secret scanner) what it is. */
export const SECRET_PREFIX = "arb_";

/** A new secret: 32 random bytes, base64url. */
export const newSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;

/** What the store keeps of a secret: its SHA-256, in hex. */
export const secretHash = (secret: string): string => createHash("sha256").update(secret).digest("hex");

async function databaseNow(db: SqlDb): Promise<string> {
  return String((await db.get(`SELECT ${db.dialect.now} AS now`))?.now);
}

export interface NewToken {
  kind: TokenKind;
  name: string;
  read_only: boolean;
  /** When it stops working (see expiryFrom), or null for never. */
  expires_at: string | null;
}

/** Makes a token; the secret is returned here once and kept nowhere. */
export async function createToken(store: SqlStore, input: NewToken): Promise<{ token: Token; secret: string }> {
  const problem = tokenNameProblem(input.kind, input.name);
  if (problem)
    throw new ArbeitError("INVALID_ARGUMENT", `The ${input.kind}'s name ${problem}.`, {
      suggestions: [
        "Give a name of 1-128 printable characters: --agent NAME for an agent, --person NAME for a person.",
      ],
      details: { field: "name" },
    });
  const secret = newSecret();
  return store.transaction("write", async (db) => {
    const now = await databaseNow(db);
    const tokens = tokenStatements(db);
    for (;;) {
      const token: Token = {
        id: newId("token"),
        name: input.name,
        kind: input.kind,
        read_only: input.read_only,
        created_at: now,
        expires_at: input.expires_at,
        revoked_at: null,
        last_used_at: null,
      };
      if (!(await tokens.insertToken(token, secretHash(secret)))) continue;
      await eventStatements(db).appendEvent({
        event_type: "token_created",
        entity_type: "token",
        entity_id: token.id,
        task_id: null,
        payload: { name: token.name, kind: token.kind, read_only: token.read_only, expires_at: token.expires_at },
        session_id: null,
        agent: null,
        timestamp: now,
      });
      return { token, secret };
    }
  });
}

/** Every token, revoked and expired ones included, with its state now. */
export async function listTokens(store: SqlStore): Promise<Array<Token & { state: string }>> {
  return store.transaction("read", async (db) => {
    const now = await databaseNow(db);
    return (await tokenStatements(db).listTokens()).map((token) => ({ ...token, state: tokenState(token, now) }));
  });
}

/**
 * Revokes the token with this id, or every live token of this name (as `token list` shows it, or
 * `agent:NAME`; a bare name an agent and a person share is refused, see tokensNamed); it stops
 * working on the service's next request.
 */
export async function revokeTokens(store: SqlStore, idOrName: string): Promise<Token[]> {
  return store.transaction("write", async (db) => {
    const now = await databaseNow(db);
    const tokens = tokenStatements(db);
    const found = await tokens.findTokens(tokenSelector(idOrName).name);
    const live = tokensNamed(
      idOrName,
      found.filter((token) => token.revoked_at === null),
    );
    if (live.length === 0)
      throw new ArbeitError(
        "INVALID_ARGUMENT",
        found.length > 0
          ? `The token ${idOrName} is already revoked.`
          : `No live token has the id or name "${idOrName}".`,
        { suggestions: ["`arbeit token list` shows every token's id, name and state."], details: { token: idOrName } },
      );
    for (const token of live) {
      await tokens.revokeToken(token.id, now);
      await eventStatements(db).appendEvent({
        event_type: "token_revoked",
        entity_type: "token",
        entity_id: token.id,
        task_id: null,
        payload: { name: token.name, kind: token.kind },
        session_id: null,
        agent: null,
        timestamp: now,
      });
    }
    return live.map((token) => ({ ...token, revoked_at: now }));
  });
}

/**
 * The active token whose secret this is, or undefined (no such token, revoked, expired, or not a
 * secret at all: the caller is not told which). Inside an open transaction it joins it, and `now`
 * (that transaction's database time) spares asking the database for its time.
 */
export async function activeToken(store: SqlStore, secret: string, now?: string): Promise<Token | undefined> {
  if (!secret.startsWith(SECRET_PREFIX) || secret.length > 200) return undefined;
  return store.transaction("read", async (db) => {
    const token = await tokenStatements(db).tokenByHash(secretHash(secret));
    return token && tokenState(token, now ?? (await databaseNow(db))) === "active" ? token : undefined;
  });
}

/**
 * Whether the token whose secret this is is active at `now`, asked inside the open transaction by
 * a statement that fails unless it is (ASSERT_ACTIVE): on Postgres that aborts the transaction,
 * so nothing it wrote commits, and its COMMIT may leave before the answer comes. The statement's
 * part of the transaction ends once it is sent, so it holds no COMMIT back (StoreTx.finalWave).
 * Any other failure (the transaction aborted already) is thrown: it is no verdict.
 */
export async function assertActiveToken(store: SqlStore, secret: string, now: string): Promise<boolean> {
  if (!secret.startsWith(SECRET_PREFIX) || secret.length > 200) return false;
  let answer: Promise<boolean> = Promise.resolve(false);
  await store.transaction("read", async (db) => {
    answer = tokenStatements(db)
      .assertTokenActive(secretHash(secret), now)
      .catch((error: unknown) => {
        if (isDivisionByZero(error)) return false;
        throw error;
      });
    // Awaited once this part has ended; a failure meanwhile is no unhandled rejection.
    answer.catch(() => {});
  });
  return answer;
}

/** Records that the token was used at the database's time now. */
export async function markUsed(store: SqlStore, id: string): Promise<void> {
  await store.transaction("write", async (db) => {
    const now = await databaseNow(db);
    await tokenStatements(db).touchToken(id, now);
  });
}

/** The agents `session` has acted as (its resume state, live work, claims and events). */
export async function sessionAgents(store: SqlStore, session: string): Promise<string[]> {
  return store.transaction("read", (db) => tokenStatements(db).sessionAgents(session));
}
