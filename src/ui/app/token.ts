/**
 * The dashboard's token, as the page holds it. `arbeit ui` prints it in the URL's fragment
 * (`#token=...`), which no browser sends to any server; on `arbeit serve` a person signs in with
 * their own token at a form. Either way the page keeps it in localStorage, never in a cookie and
 * never in a URL query. localStorage belongs to one origin (scheme, host and port), so no other
 * server on this machine can read it, unlike a cookie, which a browser sends to every port of a
 * host. Being shared by the tabs of that origin, it lets a pasted `/board` link open in a new tab.
 * Every API call and the live stream send it as `Authorization: Bearer <token>`. A token the
 * server refuses (a restarted `arbeit ui`, a revoked or expired person's token) is forgotten, and
 * the page goes back to asking for one.
 */

const KEY = "arbeit-token";

/** Whether this server signs people in with their own token (`arbeit serve`): its page says so. */
export const signsIn = (): boolean => document.querySelector('meta[name="arbeit-sign-in"]') !== null;

function stored(): string | undefined {
  try {
    return localStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

function store(token: string | undefined): void {
  try {
    if (token === undefined) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, token);
  } catch {
    // Storage refused (a private window's policy, say): this tab still holds it in memory.
  }
}

let current: string | undefined;

/**
 * Takes the token this page starts with: on `arbeit ui`, the one in the address bar (the fragment
 * it prints, or the query of an older URL), kept and removed from the address bar, history
 * included; else the one kept before. Runs before anything else reads the URL. Another tab that
 * signs out (or in) is followed.
 */
export function adoptToken(): void {
  const url = new URL(location.href);
  const fragment = new URLSearchParams(url.hash.slice(1));
  const given = signsIn() ? null : (fragment.get("token") ?? url.searchParams.get("token"));
  if (given) {
    current = given;
    store(given);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search);
  } else current = stored();
  addEventListener("storage", (event) => {
    if (event.key !== KEY && event.key !== null) return;
    const now = stored();
    if ((now === undefined) !== (current === undefined)) location.reload();
  });
}

export const hasToken = (): boolean => current !== undefined;

/** The header every request to /api/* carries. */
export function authorization(): Record<string, string> {
  // Another tab may have opened a newer URL of this origin (a restarted `arbeit ui`).
  current = stored() ?? current;
  return current ? { Authorization: `Bearer ${current}` } : {};
}

/** Keeps the token a person signed in with, and opens the dashboard with it. */
export function signIn(token: string): void {
  store(token);
  location.reload();
}

/** Forgets the token (in every tab of this origin) and goes back to the sign-in form. */
export function signOut(): void {
  store(undefined);
  location.reload();
}

/**
 * The server refused the token the page holds (401): it is worth nothing now, so it is forgotten
 * (unless another tab has kept a newer one meanwhile) and the page starts again without it.
 */
export function tokenRefused(): void {
  if (current === undefined) return;
  if (stored() === current) store(undefined);
  current = undefined;
  location.reload();
}
