/**
 * Arbeit's own secrets, recognised in text: service tokens (`arb_`), webhook signing secrets
 * (`whsec_`) and the tokens of `arbeit ui` (`arbui_`), each 32 random bytes in base64url (43
 * characters). What people and agents write is
 * stored where every token can read it back (the event log, context, titles, memory), so a secret
 * pasted into it is cut out before it is stored. The prefix stays, so a reader still sees which
 * kind of secret was there and knows to revoke it.
 *
 * @example
 * redactSecrets("export ARBEIT_TOKEN=arb_0123…(43 characters)") // "export ARBEIT_TOKEN=arb_[redacted]"
 */

/**
 * A prefix not glued to a longer word, then at least 43 base64url characters. Random bytes
 * almost never come out without a capital or a digit and a small letter, while a long
 * snake_case name (`arb_compute_the_…`) does: that is what tells a secret from an identifier.
 */
const SECRET = /(?<![A-Za-z0-9])(arb_|arbui_|whsec_)([A-Za-z0-9_-]{43,})/g;
const looksRandom = (body: string) => /[A-Z0-9]/.test(body) && /[a-z]/.test(body);

export const REDACTED = "[redacted]";

/** Whether `text` holds one of Arbeit's secrets. */
export function holdsSecret(text: string): boolean {
  return redactSecrets(text) !== text;
}

/** `text` with each of Arbeit's secrets in it replaced by its prefix and `[redacted]`. */
export function redactSecrets(text: string): string {
  if (!text.includes("arb") && !text.includes("whsec_")) return text;
  return text.replace(SECRET, (whole, prefix: string, body: string) =>
    looksRandom(body) ? `${prefix}${REDACTED}` : whole,
  );
}

/**
 * `value` (JSON-like: strings, arrays, plain objects) with every string in it redacted, and
 * whether anything was. Parts without a secret are the very same objects as before.
 */
export function withoutSecrets<T>(value: T): { value: T; redacted: boolean } {
  let redacted = false;
  const walk = (node: unknown): unknown => {
    if (typeof node === "string") {
      const clean = redactSecrets(node);
      if (clean !== node) redacted = true;
      return clean;
    }
    if (Array.isArray(node)) {
      const items = node.map(walk);
      return items.some((item, i) => item !== node[i]) ? items : node;
    }
    if (node !== null && typeof node === "object" && Object.getPrototypeOf(node) === Object.prototype) {
      let changed = false;
      const entries = Object.entries(node).map(([key, item]) => {
        const clean = walk(item);
        const cleanKey = redactSecrets(key);
        if (clean !== item || cleanKey !== key) changed = true;
        if (cleanKey !== key) redacted = true;
        return [cleanKey, clean] as const;
      });
      return changed ? Object.fromEntries(entries) : node;
    }
    return node;
  };
  return { value: walk(value) as T, redacted };
}
