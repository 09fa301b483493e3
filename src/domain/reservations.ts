/**
 * File reservations: a session holds paths or glob patterns of the project (relative to its root,
 * `/`-separated) under a lease, exclusively or shared. Two patterns conflict when some file could
 * match both, in either direction: `src/**` and `src/a.ts` conflict, and so do `src/*.ts` and
 * `src/a.*`. Pure string rules, the same on every engine and runtime.
 *
 * Pattern syntax: `*` matches within one folder name, `?` one character, `**` (a whole segment)
 * any number of folders, none included; a trailing `/` means everything below that folder.
 */

/** A reservation's mode: `exclusive` (only the holder edits) or `shared` (others are warned). */
export type ReservationMode = "exclusive" | "shared";

/** A live reservation as reads return it. */
export interface Reservation {
  id: string;
  pattern: string;
  exclusive: boolean;
  session_id: string;
  agent: string | null;
  task_id: string | null;
  lease_seconds: number;
  expires_at: string;
  created_at: string;
}

/** A reservation as tools show it: who holds what, for which task, until when. */
export interface ReservationView {
  id: string;
  pattern: string;
  mode: ReservationMode;
  session: string;
  agent: string | null;
  task_id: string | null;
  until: string;
}

export function viewOf(r: Reservation): ReservationView {
  return {
    id: r.id,
    pattern: r.pattern,
    mode: r.exclusive ? "exclusive" : "shared",
    session: r.session_id,
    agent: r.agent,
    task_id: r.task_id,
    until: r.expires_at,
  };
}

/** Who holds a reservation, for a person or a model: agent, session and task. */
export function holderOf(r: { agent: string | null; session: string; task_id: string | null }): string {
  return `${r.agent ?? r.session} (session ${r.session}${r.task_id ? `, task ${r.task_id}` : ""})`;
}

/**
 * The start of a sentence saying `path` is reserved: a pattern checked (a folder deleted whole,
 * `src/**`) is not itself reserved, files in it are.
 */
const reservedSubject = (c: { path: string; pattern: string }) =>
  hasWildcard(c.path) && c.path !== c.pattern ? `${c.path} includes files` : `${c.path} is`;

/** The answer to "may this session edit these files now?". */
export interface EditCheck {
  /** `deny`: another session holds a path exclusively; `warn`: only shared; `allow`: nobody else. */
  decision: "allow" | "warn" | "deny";
  /** For the model: who holds what, for which task, until when, and what to do instead. */
  reason?: string;
  conflicts: Array<ReservationView & { path: string }>;
}

/** The sessions whose reservations are the editor's own: its session and those it was started from. */
export function ownSessions(session: string, parents: readonly string[] = []): Set<string> {
  return new Set([session, ...parents]);
}

/**
 * The check of an edit of `paths` (project-relative, as reserved patterns are), given the live
 * reservations near them (the prefix lookup's answer) and the sessions whose reservations are
 * the editor's own: denied when another session holds one of the paths exclusively, warned when
 * only shared, allowed otherwise.
 */
export function editCheckOf(
  paths: readonly string[],
  near: readonly Reservation[],
  own: ReadonlySet<string>,
): EditCheck {
  const others = near.filter((r) => !own.has(r.session_id));
  const conflicts: EditCheck["conflicts"] = [];
  for (const path of paths)
    for (const r of others) if (patternsOverlap(r.pattern, path)) conflicts.push({ path, ...viewOf(r) });
  if (conflicts.length === 0) return { decision: "allow", conflicts };
  const denied = conflicts.find((c) => c.mode === "exclusive");
  const first = denied ?? conflicts[0]!;
  const holder = holderOf(first);
  const subject = reservedSubject(first);
  const reason = denied
    ? `${subject} reserved exclusively by ${holder} until ${first.until} (${first.pattern}). Do not edit it: work on other files, or on another task (arbeit_query ready), and come back after that time or once its work stops.`
    : `${subject} also reserved (shared) by ${holder} until ${first.until}: it may be editing it too; keep your change small and re-read the file first.`;
  return { decision: denied ? "deny" : "warn", reason, conflicts };
}

/**
 * The project memory key (project scope) that switches enforcement: the value "warn" lets an
 * edit or a commit that reservations would refuse go ahead, with the refusal as a warning.
 */
export const ENFORCE_KEY = "reservations.enforce";

/** Whether `value` (ENFORCE_KEY's value, absent when unset) makes reservations warnings only. */
export const warnsOnly = (value: unknown): boolean => value === "warn";

/** What a host does with an edit: go ahead, go ahead warned, or refuse, with the reason for the model. */
export interface GuardAnswer {
  decision: EditCheck["decision"];
  /** For the model: who holds the file, for which task, until when, and what to do instead. */
  reason?: string;
}

/**
 * The check as a host applies it: a denial in a project that enforces reservations as warnings
 * only (`enforce`: ENFORCE_KEY's value) goes ahead, warned.
 */
export function guardAnswer(check: EditCheck, enforce: unknown): GuardAnswer {
  const held = check.decision === "deny" ? check.conflicts.find((c) => c.mode === "exclusive") : undefined;
  if (held && warnsOnly(enforce))
    return {
      decision: "warn",
      reason: `${reservedSubject(held)} reserved exclusively by ${holderOf(held)} until ${held.until} (${held.pattern}). This project enforces reservations as warnings only, so the edit goes ahead: re-read the file first and keep the change small, since that session may be editing it too.`,
    };
  return { decision: check.decision, ...(check.reason ? { reason: check.reason } : {}) };
}

/**
 * True when every file of the project matches `pattern` (`**`, `**\/*`, `*\/**`): its folders are
 * all `**` but at most one that is any single name (`*`). A session may hold such a pattern
 * shared, never exclusively: that would leave no file another session may edit.
 */
export function coversEverything(pattern: string): boolean {
  const segments = pattern.split("/");
  const names = segments.filter((segment) => segment !== "**");
  return names.length < segments.length && names.length <= 1 && names.every((segment) => /^\*+$/.test(segment));
}

const WILDCARD = /[*?]/;

export function hasWildcard(pattern: string): boolean {
  return WILDCARD.test(pattern);
}

/** A folder reserved whole (`src/auth/`) is `src/auth/**`. */
export function folderPattern(pattern: string): string {
  return pattern.endsWith("/") ? `${pattern}**` : pattern;
}

/**
 * The literal leading folders of a pattern (the whole path when it has no wildcard): every file
 * the pattern matches lies at or below it, which is what lets a check look reservations up by it.
 */
export function literalPrefix(pattern: string): string {
  const segments = pattern.split("/");
  const at = segments.findIndex((segment) => hasWildcard(segment));
  return at === -1 ? pattern : segments.slice(0, at).join("/");
}

/** The prefixes a reservation could have and still match `path` (a literal path): its folders and itself. */
export function prefixesOf(path: string): string[] {
  const segments = path.split("/");
  const out = [""];
  for (let i = 1; i <= segments.length; i++) out.push(segments.slice(0, i).join("/"));
  return out;
}

/**
 * True when some string matches both `a` and `b`, sequences of items where `star` stands for any
 * run of items (none included) and `fits` says whether two single items can match one thing.
 */
function intersects<T>(a: readonly T[], b: readonly T[], star: (item: T) => boolean, fits: (x: T, y: T) => boolean) {
  const seen = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = seen.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === a.length && j === b.length) result = true;
    else if (i < a.length && star(a[i]!)) result = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (j < b.length && star(b[j]!)) result = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else if (i === a.length || j === b.length) result = false;
    else result = fits(a[i]!, b[j]!) && go(i + 1, j + 1);
    seen.set(key, result);
    return result;
  };
  return go(0, 0);
}

/** Whether two folder or file names, each possibly with `*` and `?`, can be the same name. */
function segmentsOverlap(a: string, b: string): boolean {
  if (!hasWildcard(a) && !hasWildcard(b)) return a === b;
  return intersects(
    [...a],
    [...b],
    (c) => c === "*",
    (x, y) => x === "?" || y === "?" || x === y,
  );
}

/** True when some file could match both patterns (symmetric; a literal path is a pattern too). */
export function patternsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  if (!hasWildcard(a) && !hasWildcard(b)) return false;
  return intersects(a.split("/"), b.split("/"), (segment) => segment === "**", segmentsOverlap);
}

/**
 * Path-like words a task's plan or description names (`src/auth/session.ts`, `docs/*.md`): what
 * the task plans to touch. A word counts when it has a folder or a file extension and no scheme;
 * quotes, backticks and trailing punctuation are dropped. Heuristic by nature: it only decides
 * which tasks planning keeps apart and what `start_work` may reserve when asked.
 */
export function namedPaths(text: string | null | undefined): string[] {
  if (!text) return [];
  const found = new Set<string>();
  for (const raw of text.split(/[\s,;()[\]{}<>"'`]+/)) {
    const word = raw.replace(/[.:!?]+$/, "").replace(/^\.\//, "");
    if (word.length < 3 || word.length > 300 || word.includes("://") || word.startsWith("/")) continue;
    if (word.startsWith("-") || word.startsWith("@") || word.includes("..")) continue;
    if (!/^[\w.*?\-/]+$/.test(word)) continue;
    const folder = word.includes("/") && /[A-Za-z]/.test(word);
    // A file name alone: a stem of two characters or more and a short extension; "Node.js" and
    // its kind name a project, not a file.
    const file = /^[\w*?-]{2,}(\.[\w*?-]+)*\.[a-z][a-z0-9]{0,7}$/i.test(word) && !/^[A-Z][\w-]*\.js$/.test(word);
    if (folder || file) found.add(word);
  }
  return [...found];
}
