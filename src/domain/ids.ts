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
} as const;
export type IdKind = keyof typeof ID_PREFIX;

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
