import type { IncomingMessage, ServerResponse } from "node:http";
import type { SqlStore } from "../store/sql/database.js";
import { actingAgent } from "../team/token-rules.js";
import { DashboardRoutes, type DashboardUser } from "../ui/server/routes.js";
import { type CallContext, callWithToken } from "./calls.js";
import { Refusal, readJson } from "./http.js";
import { rateLimited } from "./limits.js";
import type { Bearer } from "./token-gate.js";

/** What the request log says about a dashboard request: the tool a write called, and its outcome. */
interface Note {
  tool: string;
  outcome: string;
}

/**
 * The dashboard on `arbeit serve` (docs/team.md#the-dashboard): the routes of `arbeit ui`, for
 * people signed in with their own token. The page asks for the token at a sign-in form and sends
 * it as `Authorization: Bearer`; each request is checked like every other request to the service
 * (so a revoked token stops at once, and the token's limits count it). An agent's token is
 * refused: people sign in. Edits are calls with the person's token, so they act as
 * `human:<name>`, name the token in their events, and a read-only token's edits are refused.
 */
export class ServiceDashboard {
  readonly #routes: DashboardRoutes;
  /** Each open live event stream, with the token that opened it. */
  readonly #streams = new Map<ServerResponse, Bearer>();

  constructor(
    private readonly context: CallContext,
    /** The streams one token may hold open, the MCP sessions `otherStreams` counts included. */
    private readonly maxStreams: number,
    private readonly otherStreams: (tokenId: string) => number,
    pollMs?: number,
  ) {
    const store = context.service.store as unknown as SqlStore;
    this.#routes = new DashboardRoutes({
      service: context.service,
      engine: store.dialect.name === "postgres" ? "postgres" : "sqlite",
      location: store.location,
      signIn: true,
      readBody: readJson,
      pollMs,
    });
  }

  /** The live event streams open now, of every token. */
  get openStreams(): number {
    return this.#streams.size;
  }

  /** The live event streams `tokenId` holds open. */
  streamsOf(tokenId: string): number {
    let held = 0;
    for (const bearer of this.#streams.values()) if (bearer.token.id === tokenId) held++;
    return held;
  }

  /** Answers a request for the page or its assets (no token needed); false for any other request. */
  page(method: string, url: URL, res: ServerResponse): boolean {
    return this.#routes.page(method, url, res);
  }

  /** Answers an /api/* request (other than /api/call) that came with the checked token `bearer`. */
  api(url: URL, req: IncomingMessage, res: ServerResponse, bearer: Bearer, note: Note): Promise<void> {
    const { token } = bearer;
    if (token.kind !== "person")
      throw new Refusal(
        403,
        "FORBIDDEN",
        `This is an agent's token (${token.name}): people sign in to the dashboard with a person's token.`,
        ["An administrator makes one with `arbeit token create --person NAME`."],
      );
    const user: DashboardUser = {
      agent: actingAgent(token),
      readOnly: token.read_only,
      call: async (tool, args) => {
        note.tool = tool.name;
        const envelope = await callWithToken(this.context, bearer, tool, args, undefined);
        note.outcome = envelope.success ? "ok" : envelope.error.code;
        return envelope;
      },
      streamOpening: (stream) => {
        const held = this.streamsOf(token.id) + this.otherStreams(token.id);
        if (held >= this.maxStreams)
          throw rateLimited(
            `This token holds ${held} open streams (MCP sessions and dashboard event streams), the most it may; nothing was opened. Close a dashboard tab or an MCP session.`,
            1,
          );
        this.#streams.set(stream, bearer);
        stream.once("close", () => this.#streams.delete(stream));
      },
    };
    return this.#routes.api(req.method ?? "", url, req, res, user);
  }

  /**
   * Ends every live stream whose token no longer works (revoked or expired since it opened): the
   * page then asks again, is refused, and shows its sign-in form.
   */
  async closeRevoked(stillActive: (secret: string) => Promise<boolean>): Promise<void> {
    const verdicts = new Map<string, Promise<boolean>>();
    for (const [stream, { secret }] of [...this.#streams]) {
      let verdict = verdicts.get(secret);
      if (!verdict) {
        verdict = stillActive(secret).catch(() => true);
        verdicts.set(secret, verdict);
      }
      if (!(await verdict)) {
        this.#streams.delete(stream);
        stream.end();
      }
    }
  }

  /** Ends every live stream (the service is stopping). */
  close(): void {
    this.#routes.close();
    this.#streams.clear();
  }
}
