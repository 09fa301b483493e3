import { holdsSecret } from "./secrets.js";

/**
 * Names that identify who acts: agents, sessions and lists. They travel into every row and event
 * a caller writes, so they are checked like any other field: 1 to 128 characters, no control
 * characters (a NUL breaks Postgres text), and valid Unicode (half a surrogate pair has no UTF-8
 * form, so the name stored would not be the name given and could never be matched again).
 */
export const MAX_NAME_LENGTH = 128;

const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `value` is not a valid name, in words that follow the field's name; undefined when it is. */
export function nameProblem(value: string): string | undefined {
  if (value.length === 0) return "must not be empty";
  if (value.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters (got ${value.length})`;
  if (CONTROL.test(value)) return "must not contain control characters";
  if (LONE_SURROGATE.test(value)) return "must be valid Unicode (it holds half of a UTF-16 surrogate pair)";
  // A name is stored with every row and event its caller writes: it cannot be cut out as text is.
  if (holdsSecret(value)) return "must not hold a secret (an arb_, arbui_ or whsec_ one)";
  return undefined;
}

/** What a list id may hold beyond a name's rules: it is typed in filters and URLs. */
export const LIST_ID_PATTERN = /^[A-Za-z0-9._:/-]+$/;

/** Why `value` is not a valid list id (a name of these characters only); undefined when it is. */
export function listIdProblem(value: string): string | undefined {
  return (
    nameProblem(value) ?? (LIST_ID_PATTERN.test(value) ? undefined : "may hold letters, digits and . _ : / - only")
  );
}

const AGENT_SESSION = "agent:";

/** A person acts as `human:<name>` (a person's token, the dashboard). */
export const PERSON_PREFIX = "human:";
/** CI acts as `ci:<name>` (a CI token, `arbeit token create --ci`). */
export const CI_PREFIX = "ci:";

/**
 * Whether the agent may finish a task another session holds because its work landed (a commit or
 * pull request named): CI, which closes a task when its pull request merges, and people.
 */
export function mayFinishLanded(agent: string | null): boolean {
  return agent !== null && (agent.startsWith(CI_PREFIX) || agent.startsWith(PERSON_PREFIX));
}

/**
 * The session a caller without one acts as: one per agent name, `agent:<name>`, made to fit a
 * name's length by `fitName`.
 */
export function agentSession(agent: string | null): string {
  return fitName(`${AGENT_SESSION}${agent ?? "anonymous"}`);
}

/**
 * A name composed from other names (an agent's session, a sub-agent's session within its
 * conversation's) that may come out longer than any name may be: kept whole when it fits, else
 * cut, with a hash of the whole keeping two such names apart: `<first 111 characters>~<16 hex
 * digits>`, 128 characters. The same input always gives the same name.
 */
export function fitName(whole: string): string {
  if (whole.length <= MAX_NAME_LENGTH) return whole;
  const hash = `~${fnv1a(whole, 0x811c9dc5)}${fnv1a(whole, 0x01000193)}`;
  let head = whole.slice(0, MAX_NAME_LENGTH - hash.length);
  // Never half of a surrogate pair: the name must stay valid Unicode.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${head}${hash}`;
}

/** FNV-1a over UTF-16 code units from `seed`, as 8 hex digits (a spread, not a secret). */
function fnv1a(text: string, seed: number): string {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
