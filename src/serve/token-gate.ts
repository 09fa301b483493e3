import type { IncomingMessage } from "node:http";
import type { SqlStore } from "../store/sql/database.js";
import type { Token } from "../team/token-rules.js";
import { activeToken, markUsed } from "../team/tokens.js";
import { Refusal } from "./http.js";

/** A request's token, checked: who it is, and the secret it came with. */
export interface Bearer {
  token: Token;
  secret: string;
}

/** How often a token's last_used_at is written at most: a write on every call would cost more than the call. */
const TOUCH_EVERY_MS = 60_000;

/**
 * Checks the bearer token of every request against the store, so a revoked or expired token stops
 * working on the next request. A refusal never says whether the token or its name exists.
 */
export class TokenGate {
  readonly #touched = new Map<string, number>();
  constructor(private readonly store: SqlStore) {}

  async check(req: IncomingMessage): Promise<Bearer> {
    const header = req.headers.authorization ?? "";
    const secret = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const token = secret === undefined ? undefined : await activeToken(this.store, secret);
    if (!token || secret === undefined)
      throw new Refusal(
        401,
        "UNAUTHORIZED",
        header === "" ? "This service needs a token: Authorization: Bearer <token>." : "The token is not valid.",
      );
    this.#used(token.id);
    return { token, secret };
  }

  /** Whether the token behind `secret` still works (revocation reaches open MCP sessions so). */
  async stillActive(secret: string): Promise<boolean> {
    return (await activeToken(this.store, secret)) !== undefined;
  }

  #used(id: string): void {
    const now = Date.now();
    if (now - (this.#touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.#touched.set(id, now);
    // Bookkeeping only: a failure here must not fail the caller's request.
    markUsed(this.store, id).catch(() => this.#touched.delete(id));
  }
}
