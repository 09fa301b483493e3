import { ArbeitError } from "../domain/errors.js";

/**
 * The `cursor` a list query hands out as `next_cursor`: the sort key of the last row shown, so
 * the next page starts right after it whatever was created in between (an offset would repeat
 * or skip rows). It is bound to what it pages: the query and its `scope` (the list and the
 * filters that decide which rows are in the order), and carries a check, so that a cursor edited
 * by hand, passed to another query, or passed with other filters (which would silently skip
 * every row of the new list before its place) is refused rather than read from a wrong place.
 * Opaque to agents: base64url of a small JSON array, a dot, and the check.
 */

export type CursorKey = ReadonlyArray<string | number>;

/**
 * 48 bits of two FNV-1a hashes of the payload, as 8 base64url characters. The check catches
 * edits and mix-ups, not forgers (a cursor only reads what its caller may read anyway), so it
 * needs no cryptographic hash, and node:crypto would load Node's stream modules: a few
 * milliseconds of every CLI call that lists a page.
 */
function check(payload: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < payload.length; i++) {
    const code = payload.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193) ^ (b >>> 15);
  }
  const bytes = Buffer.alloc(6);
  bytes.writeUInt32BE(a >>> 0, 0);
  bytes.writeUInt16BE(b >>> 16, 4);
  return bytes.toString("base64url");
}

const scopeTag = (scope: string) => check(`arbeit-cursor-scope:${scope}`);

export function encodeCursor(query: string, scope: string, key: CursorKey): string {
  const payload = Buffer.from(JSON.stringify([query, scopeTag(scope), ...key])).toString("base64url");
  return `${payload}.${check(payload)}`;
}

function refused(query: string, why: string): ArbeitError {
  return new ArbeitError("INVALID_ARGUMENT", `params.cursor ${why}.`, {
    details: { field: "params.cursor" },
    suggestions: [
      `Pass the next_cursor of the previous ${query} answer unchanged, with the same params it came with, or leave cursor out to start from the first page.`,
    ],
  });
}

/**
 * The key a cursor carries, when `query` handed it out for the same `scope` and it is intact;
 * `shape` says what each value must be (the query's sort key). Anything else is INVALID_ARGUMENT.
 */
export function decodeCursor(
  query: string,
  scope: string,
  cursor: string,
  shape: ReadonlyArray<(value: unknown) => boolean>,
): CursorKey {
  const [payload, sum, ...rest] = cursor.split(".");
  if (payload === undefined || sum === undefined || rest.length > 0 || check(payload) !== sum)
    throw refused(query, "is not a cursor this store handed out (it may have been altered)");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw refused(query, "is not a cursor this store handed out");
  }
  if (!Array.isArray(parsed) || parsed[0] !== query)
    throw refused(query, `was handed out by another query, not by ${query}`);
  if (parsed[1] !== scopeTag(scope))
    throw refused(
      query,
      `was handed out by ${query} for another list or other filters; a cursor pages only the list it came from`,
    );
  const key = parsed.slice(2);
  if (key.length !== shape.length || !shape.every((valid, i) => valid(key[i])))
    throw refused(query, "does not hold a place in this query's order");
  return key as CursorKey;
}

/**
 * What a page's params say about which rows it pages: all but how many and how they are shown,
 * and the list, which counts as read (named, or the caller's).
 */
const NOT_SCOPE = new Set(["cursor", "limit", "full", "fields", "list_id"]);

/**
 * The scope a cursor is bound to: the query's params that choose its rows (filters as sets, so
 * their order does not matter), and the list it reads when it is scoped to one.
 */
export function cursorScope(params: Record<string, unknown>, list: string | undefined | null): string {
  const entries = Object.entries(params)
    .filter(([name, value]) => !NOT_SCOPE.has(name) && value !== undefined)
    .map(([name, value]) => [name, Array.isArray(value) ? [...value].map(String).sort() : value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([list ?? null, entries]);
}
