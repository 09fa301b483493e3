import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What a checkout remembers about the service it uses when that service could not be asked: since
 * when, when it was last tried and why, which sessions were told, and which edits went unchecked.
 * Kept in the checkout's `.arbeit/` (git-ignored) as one small JSON file, so that every hook
 * process of the checkout shares it: after one hook found the service away, the hooks that follow
 * within RETRY_AFTER_MS answer at once instead of each waiting for the network again. When the
 * service answers again the outage is closed, and the sessions that were told it was off are told
 * it is back, once each.
 */

/** How long a failed service is believed away: hooks within it do not try the network. */
export const RETRY_AFTER_MS = 30_000;

const STATE_FILE = "service-away.json";
/** The most sessions and unchecked edits remembered: an outage's record stays small. */
const MAX_SESSIONS = 100;
const MAX_EDITS = 100;

export interface UncheckedEdit {
  at: string;
  session: string | null;
  paths: string[];
  /** What the hook answered without the service: allowed (fail-open) or denied (fail-closed). */
  decision: "allowed" | "denied";
}

/** An outage in progress. */
export interface Away {
  url: string;
  since: string;
  last_tried: string;
  /** Why the last try failed, in a sentence. */
  why: string;
  /** service_unreachable (nothing was sent), service_timeout (no answer in time), step_refused. */
  cause: string;
  /** Sessions already told that coordination is off. */
  told: string[];
  unchecked_edits: UncheckedEdit[];
  /** The outage's id: the report of it is sent once under it. */
  id: string;
  /** Entries of the outbox delivered, and set aside, since the service answered again. */
  delivered?: number;
  set_aside?: number;
}

/** An outage that ended, until every session told of it has been told it ended. */
export interface Back {
  url: string;
  since: string;
  until: string;
  delivered: number;
  set_aside: number;
  /** Sessions still to be told. */
  tell: string[];
}

/** Steps the service refused as requests (HTTP 4xx), by step: it may run an older version. */
export interface Refused {
  step: string;
  first: string;
  count: number;
  why: string;
  told: string[];
}

export interface AwayState {
  away?: Away;
  back?: Back;
  refused?: Refused[];
}

const now = () => new Date().toISOString();

export function readAwayState(folder: string): AwayState {
  try {
    const parsed = JSON.parse(readFileSync(join(folder, STATE_FILE), "utf8")) as AwayState;
    return typeof parsed === "object" && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

/** Written whole through a scratch file and a rename: a reader never sees half of it. */
function writeAwayState(folder: string, state: AwayState): void {
  const path = join(folder, STATE_FILE);
  const empty = !state.away && !state.back && !state.refused?.length;
  try {
    if (empty) {
      rmSync(path, { force: true });
      return;
    }
    const scratch = join(folder, `.${STATE_FILE}.${process.pid}.${globalThis.crypto.randomUUID()}`);
    writeFileSync(scratch, `${JSON.stringify(state)}\n`);
    renameSync(scratch, path);
  } catch {
    // A checkout that cannot be written forgets: every hook then tries the network again.
  }
}

function update(folder: string, change: (state: AwayState) => void): AwayState {
  const state = readAwayState(folder);
  change(state);
  writeAwayState(folder, state);
  return state;
}

/** The outage in progress, when the service failed within RETRY_AFTER_MS: do not try it now. */
export function freshAway(state: AwayState, at = Date.now()): Away | undefined {
  const away = state.away;
  if (!away) return undefined;
  const tried = Date.parse(away.last_tried);
  return Number.isFinite(tried) && at - tried < RETRY_AFTER_MS && at >= tried ? away : undefined;
}

/** A try failed: the outage starts now, or goes on (its start kept). */
export function markAway(folder: string, url: string, cause: string, why: string): Away {
  const state = update(folder, (state) => {
    const at = now();
    state.away = state.away
      ? { ...state.away, last_tried: at, cause, why }
      : {
          url,
          since: at,
          last_tried: at,
          cause,
          why,
          told: [],
          unchecked_edits: [],
          id: globalThis.crypto.randomUUID(),
        };
    // A new outage supersedes the news that the last one ended.
    delete state.back;
  });
  return state.away as Away;
}

/** Entries delivered (or set aside) while closing the outage: its report counts them. */
export function addDelivered(folder: string, delivered: number, setAside: number): void {
  if (delivered === 0 && setAside === 0) return;
  update(folder, (state) => {
    if (!state.away) return;
    state.away.delivered = (state.away.delivered ?? 0) + delivered;
    state.away.set_aside = (state.away.set_aside ?? 0) + setAside;
  });
}

/** An edit the hook let through (or refused) without the service's check. */
export function noteUncheckedEdit(folder: string, edit: Omit<UncheckedEdit, "at">): void {
  update(folder, (state) => {
    if (!state.away) return;
    if (state.away.unchecked_edits.length < MAX_EDITS) state.away.unchecked_edits.push({ at: now(), ...edit });
  });
}

/** The service answered again: the outage ends; its sessions are to be told. The outage, if any. */
export function markBack(folder: string, delivered: number, setAside: number): Away | undefined {
  let ended: Away | undefined;
  update(folder, (state) => {
    ended = state.away;
    if (!ended) return;
    delete state.away;
    state.back = {
      url: ended.url,
      since: ended.since,
      until: now(),
      delivered,
      set_aside: setAside,
      tell: ended.told,
    };
  });
  return ended;
}

/** The service refused a step as a request (HTTP 4xx): remembered so the agent is told. */
export function markRefused(folder: string, step: string, why: string): void {
  update(folder, (state) => {
    state.refused ??= [];
    const refused = state.refused;
    const known = refused.find((entry) => entry.step === step);
    if (known) {
      known.count += 1;
      known.why = why;
    } else refused.push({ step, first: now(), count: 1, why, told: [] });
  });
}

const since = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");

/** What the agent is told when coordination is off. */
export function awayText(away: Away, failClosed: boolean): string {
  const edits = failClosed
    ? "file edits are refused until it answers (this project fails closed)"
    : "file edits are not checked against other sessions' reservations";
  return (
    `Arbeit: coordination is OFF since ${since(away.since)}: the service at ${away.url} cannot be asked (${away.why}). ` +
    `Until it answers, ${edits}, and what this session does (files, commits, progress, its end) is not recorded on the service: ` +
    "it is kept in this checkout (.arbeit/outbox.jsonl) and delivered, in order and once, when the service answers again. " +
    "Tell the person; other sessions cannot see this one's work meanwhile."
  );
}

function backText(back: Back): string {
  const aside =
    back.set_aside > 0
      ? ` ${back.set_aside} record(s) the service refused are kept in .arbeit/outbox-refused.jsonl (\`arbeit status\` lists them).`
      : "";
  return `Arbeit: coordination is back: the service at ${back.url} answers again (it was away from ${since(back.since)} to ${since(back.until)}); ${back.delivered} record(s) kept meanwhile were delivered.${aside}`;
}

function refusedText(refused: Refused): string {
  return (
    `Arbeit: the service refused the ${refused.step} step (${refused.why}); it may run an older Arbeit version than this checkout. ` +
    "What this step records is kept in .arbeit/outbox-refused.jsonl, not on the service; tell the person."
  );
}

/**
 * What `session` should be told now, once: coordination off, back, or a step the service
 * refuses; undefined when nothing new. Marks it told. `failClosed`: the project's edit check setting.
 */
export function takeNotice(folder: string, session: string | null, failClosed: boolean): string | undefined {
  const key = session ?? "";
  const state = readAwayState(folder);
  const lines: string[] = [];
  if (state.away && !state.away.told.includes(key)) lines.push(awayText(state.away, failClosed));
  if (state.back?.tell.includes(key)) lines.push(backText(state.back));
  for (const refused of state.refused ?? []) if (!refused.told.includes(key)) lines.push(refusedText(refused));
  if (lines.length === 0) return undefined;
  update(folder, (state) => {
    if (state.away && !state.away.told.includes(key) && state.away.told.length < MAX_SESSIONS)
      state.away.told.push(key);
    if (state.back) {
      state.back.tell = state.back.tell.filter((told) => told !== key);
      if (state.back.tell.length === 0) delete state.back;
    }
    for (const refused of state.refused ?? [])
      if (!refused.told.includes(key) && refused.told.length < MAX_SESSIONS) refused.told.push(key);
  });
  return lines.join("\n");
}
