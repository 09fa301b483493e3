/**
 * The dashboard's token, as the page holds it. `arbeit ui` prints it in the URL's fragment
 * (`#token=...`), which no browser sends to any server. The page moves it into localStorage and
 * out of the address bar. localStorage belongs to one origin (scheme, host and port), so no other
 * server on this machine can read it, unlike a cookie, which a browser sends to every port of a
 * host. Being shared by the tabs of that origin, it lets a pasted `/board` link open in a new tab.
 * Each start of `arbeit ui` makes a new token, so one left behind is worth nothing.
 * Every API call and the live stream send it as `Authorization: Bearer <token>`.
 */

const KEY = "arbeit-token";

function stored(): string | undefined {
  try {
    return localStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

let current: string | undefined;

/**
 * Takes the token from the address bar (the fragment `arbeit ui` prints, or the query of an older
 * URL), keeps it, and removes it from the address bar, history included. Runs before anything
 * else reads the URL.
 */
export function adoptToken(): void {
  const url = new URL(location.href);
  const fragment = new URLSearchParams(url.hash.slice(1));
  const given = fragment.get("token") ?? url.searchParams.get("token");
  if (given) {
    current = given;
    try {
      localStorage.setItem(KEY, given);
    } catch {
      // Storage refused (a private window's policy, say): this tab still holds it in memory.
    }
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search);
  } else current = stored();
}

export const hasToken = (): boolean => current !== undefined;

/** The header every request to /api/* carries. */
export function authorization(): Record<string, string> {
  // Another tab may have opened a newer URL of this origin (a restarted `arbeit ui`).
  current = stored() ?? current;
  return current ? { Authorization: `Bearer ${current}` } : {};
}
