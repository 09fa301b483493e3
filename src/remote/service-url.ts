import { ArbeitError } from "../domain/errors.js";

/**
 * An `arbeit serve` address as a checkout records it: http(s), no user name or password in it
 * (a token never goes into a URL that is written to a project), no trailing slash.
 */
export function serviceUrl(text: string, from: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    url = new URL("invalid://");
  }
  const bad = (why: string) =>
    new ArbeitError("INVALID_ARGUMENT", `${from} ${why}: ${JSON.stringify(text)}.`, {
      suggestions: ["Give the service's address as `arbeit serve` prints it, like https://arbeit.example.com."],
    });
  if (url.protocol !== "http:" && url.protocol !== "https:") throw bad("must be an http:// or https:// URL");
  if (url.username !== "" || url.password !== "")
    throw bad("must not hold a user name or password (tokens are stored by `arbeit login`, not in the URL)");
  if (url.search !== "" || url.hash !== "") throw bad("must not hold a query or a fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}
