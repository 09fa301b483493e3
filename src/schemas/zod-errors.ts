import type { z } from "zod";
import { ArbeitError, type ErrorCode } from "../domain/errors.js";
import { idAdvice, idKindOfPattern } from "../domain/ids.js";

/**
 * Turns a schema failure into the documented code for the field: enum misses get
 * their own codes (INVALID_STATUS, INVALID_TYPE, ...), oversize input FIELD_TOO_LARGE, malformed ids INVALID_ID, and the rest
 * INVALID_ARGUMENT. The first issue decides the code; the message lists all of them.
 */
export function fromZodError(error: z.ZodError, prefix = ""): ArbeitError {
  const issues = withoutSafeRangeEchoes(error.issues);
  const first = issues[0]!;
  const code = codeFor(first);
  const describe = (issue: z.core.$ZodIssue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
    return `${path || "input"}: ${messageFor(issue)}`;
  };
  const message =
    code === "TITLE_REQUIRED"
      ? "Every task needs a non-empty title."
      : `Invalid arguments — ${issues.map(describe).join("; ")}.`;
  // The default advice shows a task id; a malformed id of another kind gets its own.
  const idKind = code === "INVALID_ID" ? idKindOfPattern(formatMiss(first)?.pattern) : undefined;
  return new ArbeitError(code, message, {
    ...(idKind ? { suggestions: [idAdvice(idKind)] } : {}),
    details: {
      issues: issues.map((issue) => ({
        path: [prefix, ...issue.path.map(String)].filter(Boolean).join("."),
        message: messageFor(issue),
      })),
    },
  });
}

/** zod's own "Integers must be within the safe integer range" issue. */
const isSafeRange = (issue: z.core.$ZodIssue) =>
  (issue.code === "too_big" || issue.code === "too_small") && issue.origin === "int";

/**
 * A whole number past 2^53 fails twice, on zod's safe-integer bound and on the field's own range:
 * the field's own says it, so the other is left out.
 */
function withoutSafeRangeEchoes(issues: z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const key = (issue: z.core.$ZodIssue) => issue.path.map(String).join(".");
  const ranged = new Set(issues.filter((issue) => !isSafeRange(issue)).map(key));
  const kept = issues.filter((issue) => !isSafeRange(issue) || !ranged.has(key(issue)));
  return kept.length > 0 ? kept : issues;
}

function fieldOf(issue: z.core.$ZodIssue): string {
  for (let i = issue.path.length - 1; i >= 0; i--) {
    const key = issue.path[i];
    if (typeof key === "string") return key;
  }
  return "";
}

/** zod v4 leaves the input out of issues by default; a missing key reads "received undefined". */
function isMissing(issue: z.core.$ZodIssue): boolean {
  return issue.code === "invalid_type" && /received undefined/.test(issue.message);
}

/** An explicit null where a value is required: for a title, the same as leaving it out. */
function isNull(issue: z.core.$ZodIssue): boolean {
  return issue.code === "invalid_type" && /received null/.test(issue.message);
}

/** A union (e.g. a status filter: one status or a list) fails on an enum miss inside it. */
function enumMissInUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue | undefined {
  if (issue.code !== "invalid_union") return undefined;
  const inner = issue.errors.flat().find((sub) => sub.code === "invalid_value");
  return inner && { ...inner, path: [...issue.path, ...inner.path] };
}

/** Origins of a number's range: zod reports the safe-integer bound of `.int()` as "int". */
const NUMERIC = new Set<string>(["number", "int", "bigint"]);

function codeFor(issue: z.core.$ZodIssue): ErrorCode {
  const unionMiss = enumMissInUnion(issue);
  if (unionMiss) return codeFor(unionMiss);
  const field = fieldOf(issue);
  // A number past its maximum is out of range, not oversized input: nothing to shorten.
  if (issue.code === "too_big") return NUMERIC.has(issue.origin) ? "INVALID_ARGUMENT" : "FIELD_TOO_LARGE";
  if (issue.code === "custom" && (issue.params as { tooLarge?: boolean } | undefined)?.tooLarge)
    return "FIELD_TOO_LARGE";
  if (field === "title" && (issue.code === "too_small" || isMissing(issue) || isNull(issue))) {
    return "TITLE_REQUIRED";
  }
  // Anything wrong in a metadata object or below it (a filter's value of the wrong kind).
  if (issue.path.includes("metadata")) return "INVALID_METADATA";
  if (issue.code === "invalid_value") {
    if (field === "status") return "INVALID_STATUS";
    if (field === "type") return "INVALID_TYPE";
    if (field === "template") return "INVALID_TEMPLATE";
    if (field === "query") return "UNKNOWN_QUERY";
  }
  if (issue.code === "invalid_format" && (field.endsWith("_id") || field.endsWith("_ids") || field === "blocked_by")) {
    return "INVALID_ID";
  }
  return "INVALID_ARGUMENT";
}

/** The pattern miss behind an issue, found inside a union too. */
function formatMiss(issue: z.core.$ZodIssue): z.core.$ZodIssueInvalidStringFormat | undefined {
  if (issue.code === "invalid_format") return issue as z.core.$ZodIssueInvalidStringFormat;
  if (issue.code === "invalid_union") return issue.errors.flat().map(formatMiss).find(Boolean);
  return undefined;
}

/**
 * Whether a message was written here, to follow a field name ("must look like ..."), rather than
 * being one of zod's own, which begin with a capital ("Invalid input", "Too small: ...").
 */
function ownWords(issue: z.core.$ZodIssue): boolean {
  return /^[a-z]/.test(issue.message);
}

function tooSmall(issue: z.core.$ZodIssueTooSmall): string {
  const minimum = Number(issue.minimum);
  if (issue.origin === "string") return minimum <= 1 ? "must not be empty" : `must be at least ${minimum} characters`;
  if (issue.origin === "array") return `needs at least ${minimum} item${minimum === 1 ? "" : "s"}`;
  return issue.inclusive === false ? `must be more than ${minimum}` : `must be at least ${minimum}`;
}

function wrongType(issue: z.core.$ZodIssueInvalidType): string {
  const received = /received (-?\w+)/.exec(issue.message)?.[1];
  // JSON's 1e400 arrives as Infinity, which is a number to JavaScript but none a field can hold.
  if (received === "Infinity" || received === "-Infinity" || received === "NaN")
    return `must be a finite number, not ${received}`;
  const expected =
    issue.expected === "int"
      ? "a whole number"
      : issue.expected === "array" || issue.expected === "object"
        ? `an ${issue.expected}`
        : `a ${issue.expected}`;
  // A fraction where a whole number belongs is a number all the same: nothing to add.
  if (received === undefined || (issue.expected === "int" && received === "number")) return `must be ${expected}`;
  return `must be ${expected}, not ${received === "null" ? "null" : /^[aeiou]/.test(received) ? `an ${received}` : `a ${received}`}`;
}

/**
 * One issue in the words the tools use, to follow a field name. Never a regular expression: every
 * pattern in the schemas carries its own words and an example, and zod's "must match pattern"
 * fallback is replaced too, in case one ever does not.
 */
export function messageFor(issue: z.core.$ZodIssue): string {
  const message = describe(issue);
  // "a duration like 30m" reads as what the value must be.
  return /^an? /.test(message) ? `must be ${message}` : message;
}

function describe(issue: z.core.$ZodIssue): string {
  const unionMiss = enumMissInUnion(issue);
  if (unionMiss) return messageFor(unionMiss);
  if (issue.code === "invalid_union") {
    // Each alternative failed; the one with words of its own says what was wanted.
    const worded = issue.errors.flat().find(ownWords);
    return worded ? messageFor(worded) : "is not in any of the accepted forms";
  }
  if (isSafeRange(issue)) return `must be a whole number from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`;
  if (issue.code === "too_big")
    return `too large (limit ${String(issue.maximum)}${issue.origin === "string" ? " characters" : issue.origin === "array" ? " items" : ""})`;
  if (issue.code === "too_small") return tooSmall(issue);
  if (issue.code === "invalid_value") return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  if (issue.code === "unrecognized_keys") return `unknown field(s) ${issue.keys.join(", ")}`;
  if (isMissing(issue)) return "is required";
  if (issue.code === "invalid_type") return wrongType(issue);
  if (issue.code === "invalid_format" && !ownWords(issue))
    return issue.format === "datetime" ? "an ISO-8601 time like 2026-01-01T00:00:00Z" : "is not in the expected form";
  return issue.message;
}
