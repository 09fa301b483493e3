import { z } from "zod";
import { LIST_ID_PATTERN, listIdProblem, nameProblem } from "../domain/identity.js";
import { type IdKind, idForm, idPattern } from "../domain/ids.js";
import { jsonBytes } from "./json-size.js";
import { LIMITS } from "./limits.js";

/** zod building blocks shared by the tool catalogue and the query registry. */

const noNul = (value: string) => !value.includes("\0");
const NUL_MESSAGE = "must not contain NUL bytes";
// SQLite stores UTF-8, where half a surrogate pair has no encoding: it would come back as U+FFFD.
const LONE_SURROGATE = /\p{Cs}/u;
const wellFormed = (value: string) => !LONE_SURROGATE.test(value);
const SURROGATE_MESSAGE = "must be valid Unicode (it holds half of a UTF-16 surrogate pair)";

/** Text stored and returned verbatim: at most `max` UTF-16 code units, no NUL, no lone surrogate. */
export function text(max: number) {
  return z.string().max(max).refine(noNul, NUL_MESSAGE).refine(wellFormed, SURROGATE_MESSAGE);
}

export { jsonBytes };

/** Why `value` cannot be stored as text verbatim (a NUL, half a surrogate pair), or undefined. */
function textProblem(value: string): string | undefined {
  if (!noNul(value)) return NUL_MESSAGE;
  if (!wellFormed(value)) return SURROGATE_MESSAGE;
  return undefined;
}

/**
 * Why `value` is not plain JSON nested at most LIMITS.json_depth deep, or undefined when it is.
 * Iterative, so a hostile million-level nesting cannot exhaust the stack before it is refused.
 */
function jsonProblem(value: unknown, textRules: boolean): { message: string; tooLarge?: boolean } | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!;
    if (typeof item === "string") {
      const problem = textRules ? textProblem(item) : undefined;
      if (problem) return { message: problem };
      continue;
    }
    if (item === null || typeof item === "boolean") continue;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return { message: "must hold finite numbers only (JSON has no NaN or Infinity)" };
      continue;
    }
    const isArray = Array.isArray(item);
    const proto = typeof item === "object" ? Object.getPrototypeOf(item) : undefined;
    if (!isArray && proto !== Object.prototype && proto !== null) return { message: "must be plain JSON" };
    if (depth >= LIMITS.json_depth) {
      return { message: `is nested too deeply (limit ${LIMITS.json_depth} levels)`, tooLarge: true };
    }
    for (const [key, child] of Object.entries(item as object)) {
      const problem = isArray || !textRules ? undefined : textProblem(key);
      if (problem) return { message: `has a key that ${problem}` };
      if (child !== undefined) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * Any JSON value at most `maxBytes` of UTF-8 once serialised; over it is FIELD_TOO_LARGE. JSON
 * escapes a NUL or half a surrogate pair, so a value kept as JSON text keeps them; `textRules`
 * refuses them in keys and strings as in text fields, for values the store also compares as
 * Postgres jsonb (which holds neither).
 */
export function jsonValue<T extends z.ZodType>(base: T, maxBytes: number, textRules = false) {
  return base.superRefine((value, ctx) => {
    const problem = jsonProblem(value, textRules);
    if (problem) {
      ctx.addIssue({ code: "custom", message: problem.message, params: { tooLarge: problem.tooLarge === true } });
      return;
    }
    if (jsonBytes(value) > maxBytes) {
      ctx.addIssue({
        code: "custom",
        message: `is too large (limit ${maxBytes} bytes of JSON)`,
        params: { tooLarge: true },
      });
    }
  });
}

export function id(kind: IdKind) {
  return z.string().regex(idPattern(kind), `must look like ${idForm(kind)}`);
}

export const taskId = id("task");

/**
 * Keys an object of the caller's keys may not hold. An object built from `__proto__` loses it
 * without a word (the assignment sets the prototype instead, and zod strips it), so a filter on it
 * filtered nothing; `constructor` and `prototype` name what every JavaScript object already has,
 * and a lookup of them finds that instead of a missing key.
 */
const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** The first reserved key in `value` down to `maxDepth`, as a dotted path ("labels.__proto__"), or undefined. */
function reservedKeyPath(value: unknown, rules: KeyRules): string | undefined {
  const { maxDepth = LIMITS.json_depth, nullRemoves = false } = rules;
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: "", depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    // Deeper than any value may nest: the depth rule refuses it anyway, and the walk stays bounded.
    if (item.value === null || typeof item.value !== "object" || item.depth > maxDepth) continue;
    const isArray = Array.isArray(item.value);
    for (const key of Object.keys(item.value)) {
      const path = item.path === "" ? key : `${item.path}.${key}`;
      const child = (item.value as Record<string, unknown>)[key];
      const removal = nullRemoves && item.depth === 0 && child === null;
      if (!isArray && RESERVED_KEYS.has(key) && !removal) return path;
      stack.push({ value: child, path, depth: item.depth + 1 });
    }
  }
  return undefined;
}

interface KeyRules {
  /** How deep keys are checked: 0 where the values are checked by a schema of their own. */
  maxDepth?: number;
  /**
   * A top-level key given as null removes it and sets nothing, so a reserved one is let through:
   * a task whose metadata held `constructor` before the rule can still drop it.
   */
  nullRemoves?: boolean;
}

/**
 * An object of the caller's keys, refused whole if a key is reserved (see KeyRules for where).
 * The check runs on the value as given: zod's record drops `__proto__` before a refinement could
 * see it.
 */
function ownKeys<T extends z.ZodType>(record: T, rules: KeyRules = {}) {
  return z.preprocess((value, ctx) => {
    const path = reservedKeyPath(value, rules);
    if (path !== undefined) {
      ctx.addIssue({
        code: "custom",
        input: value,
        message: `must not use the key ${JSON.stringify(path)}: __proto__, constructor and prototype are reserved names`,
      });
    }
    return value;
  }, record);
}

/**
 * Metadata as a store may hold it: a JSON object at most LIMITS.metadata_bytes serialised. Rows
 * written before the reserved keys were refused may hold `constructor` or `prototype`, and a
 * backup of them must still restore.
 */
export const storedMetadata = jsonValue(z.record(z.string(), z.unknown()), LIMITS.metadata_bytes);

/** A JSON object (never an array or a scalar), at most LIMITS.metadata_bytes serialised. */
export const metadata = ownKeys(storedMetadata);

/** A task's metadata: a metadata object whose keys and strings follow the text rules (it is filtered as jsonb). */
export const taskMetadata = ownKeys(jsonValue(z.record(z.string(), z.unknown()), LIMITS.metadata_bytes, true), {
  nullRemoves: true,
});

/** A listing's filter on metadata: keys each with the string, number or boolean they must hold. */
export const metadataFilter = () =>
  ownKeys(jsonValue(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])), LIMITS.metadata_bytes, true));

/** Arguments passed on to a tool or query that checks them by its own schema (which refuses unknown keys). */
export const passedArguments = () => ownKeys(z.record(z.string(), z.unknown()), { maxDepth: 0 });

export const name = text(LIMITS.name);

function nameSchema(problemOf: (value: string) => string | undefined, pattern?: RegExp) {
  return z
    .string()
    .superRefine((value, ctx) => {
      const problem = problemOf(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .meta({ minLength: 1, maxLength: LIMITS.identity_name, ...(pattern ? { pattern: pattern.source } : {}) });
}

/**
 * An agent, session or list name: 1-128 characters, no control characters, valid Unicode. Every
 * failure is INVALID_ARGUMENT (a name is not content to shorten).
 */
export const identityName = nameSchema(nameProblem);
export const listId = nameSchema(listIdProblem, LIST_ID_PATTERN);

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `value` is a real instant in the one form both stores write (checked without a Date: imports check thousands). */
function isInstant(value: string): boolean {
  const match = INSTANT.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= MONTH_DAYS[month - 1]! + (leap ? 1 : 0);
}

/** An instant as both stores write it: UTC to the millisecond, `2026-01-01T00:00:00.000Z`. */
export const timestamp = z.string().refine(isInstant, "must be a UTC timestamp like 2026-01-01T00:00:00.000Z");

export const limit = z.number().int().min(1).max(LIMITS.query_limit);
export const offset = z.number().int().min(0);

/** Optimistic concurrency: the version the caller last read. */
export const expectedVersion = z.number().int().min(1);

/** Idempotency key: a repeat by the same agent replays the first response. */
export const requestId = text(LIMITS.name).min(1);
