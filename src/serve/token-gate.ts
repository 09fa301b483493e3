import type { IncomingMessage } from "node:http";
import type { SqlStore } from "../store/sql/database.js";
import type { TaskStore } from "../store/task-store.js";
import type { Token } from "../team/token-rules.js";
import { activeToken, assertActiveToken, markUsed, secretHash } from "../team/tokens.js";
import { Refusal } from "./http.js";

/** A request's token: who it is, the secret it came with, and whether it was found active on this request. */
export interface Bearer {
  token: Token;
  secret: string;
  /**
   * False when the token is known from an earlier request and this request has not yet read it
   * again: whatever the request does on the store must first check it (CallGuard), in the same
   * transaction, so a revoked or expired token is still refused on its next request.
   */
  verified: boolean;
}

/** How often a token's last_used_at is written at most: a write on every call would cost more than the call. */
const TOUCH_EVERY_MS = 60_000;
/** Tokens remembered at most; past it the memory starts again (a new request only reads its token again). */
const REMEMBERED = 10_000;

/** The refusal of a token that is missing, unknown, revoked or expired: it never says which. */
export const invalidToken = (sent: boolean) =>
  new Refusal(
    401,
    "UNAUTHORIZED",
    sent ? "The token is not valid." : "This service needs a token: Authorization: Bearer <token>.",
  );

/**
 * Checks the bearer token of every request against the store, so a revoked or expired token stops
 * working on the next request. A refusal never says whether the token or its name exists.
 *
 * What a token is (its name, kind, read-only flag and expiry) never changes once made, so a token
 * seen active before is known by the hash of its secret without a read; whether it is still
 * active (not revoked, not expired) is read on every request all the same: by `check` in a
 * transaction of its own, or by the request's call in its own first transaction (CallGuard).
 */
export class TokenGate {
  readonly #touched = new Map<string, number>();
  readonly #known = new Map<string, Token>();
  constructor(private readonly store: TaskStore & SqlStore) {}

  /**
   * The active token whose secret this is: read in the transaction open now, at its database time
   * `now`, or else in a read transaction of its own (whose time comes with its start, not asked).
   */
  #activeToken(secret: string, now: string | undefined) {
    if (now !== undefined) return activeToken(this.store, secret, now);
    return this.store.read((tx) => activeToken(this.store, secret, tx.databaseNow()));
  }

  /** The request's token, read and found active now. */
  async check(req: IncomingMessage): Promise<Bearer> {
    const bearer = await this.identify(req);
    if (bearer.verified) return bearer;
    if (!(await this.active(bearer, undefined))) throw invalidToken(true);
    this.used(bearer.token.id);
    return { ...bearer, verified: true };
  }

  /**
   * The request's token: read from the store when not known yet (refused if not active), else
   * known without a read and not yet verified on this request.
   */
  async identify(req: IncomingMessage): Promise<Bearer> {
    const header = req.headers.authorization ?? "";
    const secret = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (secret === undefined) throw invalidToken(header !== "");
    const hash = secretHash(secret);
    const known = this.#known.get(hash);
    if (known) return { token: known, secret, verified: false };
    const token = await this.#activeToken(secret, undefined);
    if (!token) throw invalidToken(true);
    if (this.#known.size >= REMEMBERED) this.#known.clear();
    this.#known.set(hash, token);
    this.used(token.id);
    return { token, secret, verified: true };
  }

  /**
   * Whether the bearer's token is still active, read in the transaction open now if there is one
   * (at its database time `now`). A token found inactive is forgotten.
   */
  async active(bearer: Bearer, now: string | undefined): Promise<boolean> {
    const token = await this.#activeToken(bearer.secret, now);
    if (!token) this.#known.delete(secretHash(bearer.secret));
    return token !== undefined;
  }

  /**
   * Whether the bearer's token is still active, asked in the transaction open now (at its database
   * time `now`) by a statement that aborts it unless the token is (assertActiveToken), so the
   * transaction may commit before the answer comes. A token found inactive is forgotten.
   */
  async asserted(bearer: Bearer, now: string): Promise<boolean> {
    const active = await assertActiveToken(this.store, bearer.secret, now);
    if (!active) this.#known.delete(secretHash(bearer.secret));
    return active;
  }

  /** Whether the token behind `secret` still works (revocation reaches open MCP sessions so). */
  async stillActive(secret: string): Promise<boolean> {
    return (await this.#activeToken(secret, undefined)) !== undefined;
  }

  /**
   * Records that the token was used (at most once a minute). Never call it inside a transaction:
   * the record is a write of its own.
   */
  used(id: string): void {
    const now = Date.now();
    if (now - (this.#touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.#touched.set(id, now);
    // Bookkeeping only: a failure here must not fail the caller's request.
    markUsed(this.store, id).catch(() => this.#touched.delete(id));
  }
}
