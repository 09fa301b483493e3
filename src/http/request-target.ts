import { HttpRefusal, malformed } from "./refusals.js";

/** Longer targets than any of the dashboard's URLs need are refused before anything reads them. */
export const TARGET_LIMIT = 8 * 1024;

/** Each `%` must start an escape of two hex digits, and the escapes must spell UTF-8. */
function decodes(text: string): boolean {
  try {
    decodeURIComponent(text.replaceAll("+", " "));
    return true;
  } catch {
    return false;
  }
}

/**
 * The request target as a URL, or a refusal. Only the origin form (`/path?query`) is accepted:
 * an absolute URL, `*`, `//name/...` or a backslash would let a URL parser read a host out of
 * the target, so they are refused rather than guessed at.
 */
export function requestTarget(raw: string | undefined): URL {
  if (raw === undefined || raw === "") throw malformed("it has no target.");
  if (raw.length > TARGET_LIMIT)
    throw new HttpRefusal(414, "FIELD_TOO_LARGE", `The URL is longer than ${TARGET_LIMIT} characters.`);
  if (!raw.startsWith("/") || raw.startsWith("//"))
    throw malformed("the target must be a path starting with a single /.");
  if (/[\\#\s]/.test(raw)) throw malformed("the target holds a character a URL path cannot hold.");
  const query = raw.indexOf("?");
  const path = query < 0 ? raw : raw.slice(0, query);
  const pairs = query < 0 ? [] : raw.slice(query + 1).split(/[&=]/);
  if (!decodes(path) || !pairs.every(decodes)) throw malformed("the URL has a broken %-escape.");
  try {
    return new URL(raw, "http://dashboard.invalid");
  } catch {
    throw malformed("the target is not a URL path.");
  }
}
