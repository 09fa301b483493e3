import { ArbeitError } from "../domain/errors.js";
import { guardSwitchRefusal } from "../domain/guard-switches.js";
import { agentSession, nameProblem, PERSON_PREFIX } from "../domain/identity.js";

import { otherAgentsMemoryRefusal } from "../domain/memory-owner.js";
import type { Caller } from "../service/caller.js";

/**
 * What a token of `arbeit serve` is and what it may do (docs/team.md). An agent token fixes the
 * agent's name: its caller picks only a session. A person token acts as `human:<name>`. Breaking
 * another session's claim and answering a question are things people do. A read-only token calls
 * read-only tools only.
 */

export const TOKEN_KINDS = ["agent", "person"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** A token as stored, without its secret (only the secret's hash is kept, and never shown). */
export interface Token {
  id: string;
  name: string;
  kind: TokenKind;
  read_only: boolean;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export type TokenState = "active" | "expired" | "revoked";

/** Names an agent's token where the bare name would also name a person's. */
const AGENT_PREFIX = "agent:";

/** The one definition of a token's state; ASSERT_ACTIVE in src/store/sql/tokens.ts asks the same of a stored token. */
export function tokenState(token: Pick<Token, "expires_at" | "revoked_at">, now: string): TokenState {
  if (token.revoked_at !== null) return "revoked";
  if (token.expires_at !== null && token.expires_at <= now) return "expired";
  return "active";
}

/** The agent name everything done with the token is recorded under. */
export function actingAgent(token: Pick<Token, "kind" | "name">): string {
  return token.kind === "person" ? `${PERSON_PREFIX}${token.name}` : token.name;
}

/** Why `name` cannot name a token of `kind`; undefined when it can. */
export function tokenNameProblem(kind: TokenKind, name: string): string | undefined {
  const problem = nameProblem(kind === "person" ? `${PERSON_PREFIX}${name}` : name);
  if (problem) return problem;
  if (name.trim() === "") return "must not be blank";
  // A person's token adds the prefix itself; an agent's name must not pass for a person's.
  if (name.startsWith(PERSON_PREFIX))
    return kind === "agent"
      ? `must not start with "${PERSON_PREFIX}" (that names a person: use --person)`
      : `is given without "${PERSON_PREFIX}" (it is added)`;
  // "agent:" picks an agent's token out of a name a person shares, so no name may start with it.
  if (kind === "agent" && name.startsWith(AGENT_PREFIX))
    return `must not start with "${AGENT_PREFIX}" (it names an agent's token where a person has the same name)`;
  return undefined;
}

/**
 * Which tokens a name given to a command means: the form `arbeit token list` shows (its acting
 * name: `erin`, `human:dana`, `ci:github`), `agent:erin` for an agent's token, or a bare name,
 * which may mean an agent's and a person's token alike (tokensNamed says which).
 */
export function tokenSelector(text: string): { name: string; kind?: TokenKind } {
  if (text.startsWith(PERSON_PREFIX)) return { name: text.slice(PERSON_PREFIX.length), kind: "person" };
  if (text.startsWith(AGENT_PREFIX)) return { name: text.slice(AGENT_PREFIX.length), kind: "agent" };
  return { name: text };
}

/**
 * The tokens `text` (an id or a name, as tokenSelector reads it) means among `found`, the
 * tokens whose id or bare name is the selector's name. A bare name that an agent's token and a
 * person's token both have is refused (INVALID_ARGUMENT, details.choices): revoking one must not
 * stop the other.
 */
export function tokensNamed<T extends Pick<Token, "id" | "kind" | "name">>(text: string, found: readonly T[]): T[] {
  const selector = tokenSelector(text);
  const byId = found.filter((token) => token.id === text);
  if (byId.length > 0) return byId;
  const named = found.filter(
    (token) => token.name === selector.name && (selector.kind === undefined || token.kind === selector.kind),
  );
  const kinds = new Set(named.map((token) => token.kind));
  if (selector.kind === undefined && kinds.size > 1) {
    const choices = [...kinds].sort().map((kind) => (kind === "person" ? PERSON_PREFIX : AGENT_PREFIX) + text);
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      `"${text}" names both an agent's token and a person's; say which: ${choices.join(" or ")}.`,
      {
        suggestions: [`Give ${choices.join(" or ")}; \`arbeit token list\` shows every token's name.`],
        details: { token: text, choices },
      },
    );
  }
  return named;
}

const DURATION = /^(\d{1,5})([hdw])$/;
const HOURS = { h: 1, d: 24, w: 24 * 7 } as const;

/**
 * When a token given `--expires <text>` at `now` stops working: a duration (12h, 30d, 2w) from
 * now, or a date (2027-01-31, midnight UTC) or instant. It must lie in the future.
 */
export function expiryFrom(text: string, now: Date): string {
  const duration = DURATION.exec(text);
  let at: Date;
  if (duration) {
    const hours = Number(duration[1]) * HOURS[duration[2] as keyof typeof HOURS];
    at = new Date(now.getTime() + hours * 3_600_000);
  } else {
    at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(text) ? new Date(text) : new Date(Number.NaN);
    if (Number.isNaN(at.getTime()))
      throw new ArbeitError("INVALID_ARGUMENT", `--expires takes a duration (12h, 30d, 2w) or a date, not "${text}".`, {
        suggestions: ["Give e.g. --expires 30d, or --expires 2027-01-31."],
        details: { field: "expires" },
      });
  }
  if (at.getTime() <= now.getTime())
    throw new ArbeitError("INVALID_ARGUMENT", `--expires ${text} is not in the future.`, {
      suggestions: ["Give a later date, or a duration such as 30d."],
      details: { field: "expires" },
    });
  return at.toISOString();
}

/** Who a call made with the token is: its agent, in the session the caller chose; its events name the token. */
export function tokenCaller(token: Pick<Token, "id" | "kind" | "name">, session: string | undefined): Caller {
  const agent = actingAgent(token);
  return { agent, session: session ?? agentSession(agent), token: token.id };
}

const forbidden = (message: string, details: Record<string, unknown>) =>
  new ArbeitError("FORBIDDEN", message, { details });

/**
 * Why the token may not use `session`, or undefined when it may. Sessions named `agent:<name>`
 * belong to that agent (a caller without a session acts in one), so another's is not the
 * caller's to pick.
 */
export function sessionRefusal(token: Pick<Token, "kind" | "name">, session: string): ArbeitError | undefined {
  if (session.startsWith("agent:") && session !== agentSession(actingAgent(token)))
    return forbidden(`The session "${session}" belongs to another agent; this token acts as ${actingAgent(token)}.`, {
      session,
    });
  return undefined;
}

/**
 * Why the token may not act in `session`, which has acted as `agents` (its state, work and
 * claims), or undefined when it may: a session belongs to the agent that used it first, so a
 * token cannot take over another agent's session (and with it, its claims) by naming it.
 */
export function sessionOwnerRefusal(
  token: Pick<Token, "kind" | "name">,
  session: string,
  agents: readonly string[],
): ArbeitError | undefined {
  const other = agents.find((agent) => agent !== actingAgent(token));
  if (other === undefined) return undefined;
  return forbidden(`The session "${session}" belongs to another agent; this token acts as ${actingAgent(token)}.`, {
    session,
  });
}

/** What the access rules need to know of a tool: its name and whether it only reads. */
export interface ToolFacts {
  name: string;
  readOnly: boolean;
}

type Args = Record<string, unknown>;

/**
 * Whether this call only reads: a read-only tool, or arbeit_resume with `peek: true` (it briefs
 * without moving the session's cursor, in a read transaction).
 */
function callOnlyReads(tool: ToolFacts, args: Args): boolean {
  return tool.readOnly || (tool.name === "arbeit_resume" && args.peek === true);
}
const asArgs = (value: unknown): Args =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Args) : {};

/**
 * Why the token may not make this call, or undefined when it may. `lookup` names a tool's
 * facts (undefined for no such tool: the tool's own validation reports that). The operations of
 * a batch are held to the same rules one by one.
 */
export function callRefusal(
  token: Pick<Token, "kind" | "name" | "read_only">,
  tool: ToolFacts,
  rawArgs: unknown,
  lookup: (name: string) => ToolFacts | undefined,
): ArbeitError | undefined {
  const args = asArgs(rawArgs);
  if (token.read_only && !callOnlyReads(tool, args))
    return forbidden(`This token is read-only; ${tool.name} writes.`, { tool: tool.name });
  if (typeof args.session === "string") {
    const refusal = sessionRefusal(token, args.session);
    if (refusal) return refusal;
  }
  // Refused before the call as well as by the service, so a batch is refused whole, naming the operation.
  if (tool.name === "arbeit_memory") {
    const refusal = otherAgentsMemoryRefusal(actingAgent(token), args);
    if (refusal) return refusal;
  }
  if (token.kind === "agent") {
    if (tool.name === "arbeit_memory") {
      const refusal = guardSwitchRefusal(args);
      if (refusal) return refusal;
    }
    // Every `force` breaks another session's claim (a release, an update, a delete): a person's step.
    if (args.force === true)
      return forbidden(
        "Only a person's token may break another session's claim (force: true); an agent waits for the lease to end or asks a person.",
        { tool: tool.name },
      );
    if (tool.name === "arbeit_context_add" && args.type === "user_input")
      return forbidden(
        "A user_input entry is a person's answer, so only a person's token may add one; an agent records what it learned as a note or decision.",
        { tool: tool.name },
      );
  }
  if (tool.name === "arbeit_batch" && Array.isArray(args.operations)) {
    for (const [index, operation] of args.operations.entries()) {
      const { tool: name, args: inner } = asArgs(operation);
      const facts = typeof name === "string" ? lookup(name) : undefined;
      const refusal = facts && callRefusal(token, facts, inner, lookup);
      if (refusal)
        return new ArbeitError("FORBIDDEN", `Operation ${index} (${facts.name}): ${refusal.message}`, {
          suggestions: refusal.suggestions,
          details: { ...refusal.details, operation_index: index },
        });
    }
  }
  return undefined;
}
