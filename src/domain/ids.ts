/** Entity id prefixes: prefix + 8 lowercase alphanumerics (tkt-a7f3b2c1). */
export const ID_PREFIX = {
  task: "tkt",
  context: "ctx",
  progress: "prg",
  relationship: "rel",
  event: "evt",
  file: "fle",
  session: "ses",
  memory: "mem",
  token: "tok",
  webhook: "whk",
  reservation: "rsv",
} as const;
export type IdKind = keyof typeof ID_PREFIX;

/** What each kind of id names, for messages about a malformed one. */
const ID_NOUN: Record<IdKind, string> = {
  task: "a task",
  context: "a context entry",
  progress: "a progress item",
  relationship: "a relationship",
  event: "an event",
  file: "a file record",
  session: "a session link",
  memory: "a memory entry",
  token: "a token",
  webhook: "a webhook",
  reservation: "a file reservation",
};

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const ID_BODY_LENGTH = 8;

export function newId(kind: IdKind): string {
  // Web Crypto is global in Node >= 20 and Bun alike, so the domain needs no runtime import.
  const bytes = crypto.getRandomValues(new Uint8Array(ID_BODY_LENGTH));
  let body = "";
  // 256 % 36 leaves a slight bias towards the first letters; harmless for uniqueness,
  // which the stores enforce anyway by retrying on a clash.
  for (const byte of bytes) body += ALPHABET[byte % ALPHABET.length];
  return `${ID_PREFIX[kind]}-${body}`;
}

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIX[kind]}-[a-z0-9]{${ID_BODY_LENGTH}}$`);
}

export function isId(kind: IdKind, value: string): boolean {
  return idPattern(kind).test(value);
}

/** An id of this kind as people are shown it, e.g. prg-a7f3b2c1. */
export function exampleId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}-a7f3b2c1`;
}

/** The expected form in words: "prg-a7f3b2c1 (prg- and 8 lowercase letters or digits)". */
export function idForm(kind: IdKind): string {
  return `${exampleId(kind)} (${ID_PREFIX[kind]}- and ${ID_BODY_LENGTH} lowercase letters or digits)`;
}

/** The advice for a malformed id of this kind. */
export function idAdvice(kind: IdKind): string {
  return `The id of ${ID_NOUN[kind]} looks like ${idForm(kind)}.`;
}

/** The kind whose pattern `pattern` is (as a schema failure reports it), if any. */
export function idKindOfPattern(pattern: string | RegExp | undefined): IdKind | undefined {
  if (pattern === undefined) return undefined;
  const text = String(pattern);
  return (Object.keys(ID_PREFIX) as IdKind[]).find((kind) => {
    const own = idPattern(kind);
    return text === String(own) || text === own.source;
  });
}
