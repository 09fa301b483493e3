import type { ArbeitError } from "../domain/errors.js";
import type { SqlStore } from "../store/sql/database.js";
import { actingAgent, sessionOwnerRefusal, type Token } from "../team/token-rules.js";
import { sessionAgents } from "../team/tokens.js";

/** Sessions remembered at most; past it the memory starts again (a lookup is only a read). */
const REMEMBERED = 10_000;

/**
 * Which agent each session chosen by a caller belongs to. A session is asked of the store until
 * it has acted as someone; from then on its agent is remembered, since a session never changes
 * hands (see sessionOwnerRefusal).
 */
export class SessionOwners {
  readonly #owner = new Map<string, string>();
  constructor(private readonly store: SqlStore) {}

  /** The verdict on `session` when its owner is remembered (no read needed), else undefined. */
  remembered(token: Token, session: string): { refusal: ArbeitError | undefined } | undefined {
    const known = this.#owner.get(session);
    return known === undefined ? undefined : { refusal: sessionOwnerRefusal(token, session, [known]) };
  }

  async refusal(token: Token, session: string): Promise<ArbeitError | undefined> {
    const agent = actingAgent(token);
    const remembered = this.remembered(token, session);
    if (remembered) return remembered.refusal;
    const agents = await sessionAgents(this.store, session);
    const refusal = sessionOwnerRefusal(token, session, agents);
    if (!refusal && agents.length > 0) {
      if (this.#owner.size >= REMEMBERED) this.#owner.clear();
      this.#owner.set(session, agent);
    }
    return refusal;
  }
}
