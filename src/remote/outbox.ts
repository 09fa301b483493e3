import {
  appendFileSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/**
 * The checkout's outbox: what hooks could not record on the service (file touches, commits,
 * progress, the end of a session), kept in `.arbeit/` (git-ignored) until the service answers
 * again, then delivered in the order it happened, each entry once.
 *
 * - An entry is appended as one line of JSON to `outbox.jsonl` (appends need no lock: each is one
 *   write of one line). Its `id` went with the step's first try too, and the service runs a step
 *   with an id at most once: an entry whose first try got no answer (it may have been applied) is
 *   not applied twice.
 * - One process at a time delivers, holding `outbox.lock`. It renames `outbox.jsonl` to
 *   `outbox.delivering.jsonl` (new entries then start a new `outbox.jsonl` behind it), sends each
 *   entry in order, and records how many it sent in `outbox.delivering.count`, so a delivery cut
 *   short (the service went away again, the process was killed) goes on where it stopped.
 * - An entry the service refuses for good (not an answer that it is away) is moved to
 *   `outbox-refused.jsonl` with the refusal, never dropped, and the next entry follows.
 */

const OUTBOX = "outbox.jsonl";
const DELIVERING = "outbox.delivering.jsonl";
const DELIVERED_COUNT = "outbox.delivering.count";
const REFUSED = "outbox-refused.jsonl";
const LOCK = "outbox.lock";
/** A lock older than this was left by a process that died mid-delivery: taken over. */
const STALE_LOCK_MS = 120_000;

export interface OutboxEntry {
  id: string;
  /** When the hook ran. */
  at: string;
  hook: string;
  session?: string | undefined;
  parents?: readonly string[] | undefined;
  list?: string | undefined;
  input: unknown;
}

export interface RefusedEntry extends OutboxEntry {
  refused_at: string;
  error: { code: string; message: string };
}

/** How one delivery went: "sent" (applied, or already applied), "refused" for good, "away": stop. */
export type Delivery = { outcome: "sent" } | { outcome: "refused"; error: RefusedEntry["error"] } | { outcome: "away" };

export function enqueue(folder: string, entry: OutboxEntry): void {
  appendFileSync(join(folder, OUTBOX), `${JSON.stringify(entry)}\n`);
}

/** An entry the service refused for good: kept beside the outbox with the refusal, never dropped. */
export function setAside(folder: string, entry: OutboxEntry, error: RefusedEntry["error"]): void {
  const refused: RefusedEntry = { ...entry, refused_at: new Date().toISOString(), error };
  appendFileSync(join(folder, REFUSED), `${JSON.stringify(refused)}\n`);
}

const nonEmpty = (path: string) => {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
};

/** Whether anything waits to be delivered. */
export function hasPending(folder: string): boolean {
  return nonEmpty(join(folder, OUTBOX)) || existsSync(join(folder, DELIVERING));
}

function lines(path: string): OutboxEntry[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  // A line cut short (the disk filled mid-append) is not an entry; the rest are.
  return text.split("\n").flatMap((line) => {
    if (line.trim() === "") return [];
    try {
      return [JSON.parse(line) as OutboxEntry];
    } catch {
      return [];
    }
  });
}

/** What waits: the entries in delivery order (the one being delivered first), and those set aside. */
export function outboxContents(folder: string): { pending: OutboxEntry[]; refused: RefusedEntry[] } {
  const done = deliveredCount(folder);
  return {
    pending: [...lines(join(folder, DELIVERING)).slice(done), ...lines(join(folder, OUTBOX))],
    refused: lines(join(folder, REFUSED)) as RefusedEntry[],
  };
}

function deliveredCount(folder: string): number {
  try {
    const count = Number.parseInt(readFileSync(join(folder, DELIVERED_COUNT), "utf8"), 10);
    return Number.isSafeInteger(count) && count >= 0 ? count : 0;
  } catch {
    return 0;
  }
}

/** Takes the delivery lock, or undefined when a live process holds it. */
function lock(folder: string): (() => void) | undefined {
  const path = join(folder, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeFileSync(fd, `${process.pid} ${Date.now()}\n`);
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
      if (!staleLock(path)) return undefined;
      rmSync(path, { force: true });
    }
  }
  return undefined;
}

function staleLock(path: string): boolean {
  try {
    const [pid, at] = readFileSync(path, "utf8").trim().split(" ").map(Number);
    if (!Number.isFinite(at) || Date.now() - (at as number) > STALE_LOCK_MS) return true;
    try {
      process.kill(pid as number, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH";
    }
  } catch {
    return false;
  }
}

export interface DrainResult {
  /** "done": nothing waits; "away": the service stopped answering; "busy": another process delivers, or time ran out. */
  state: "done" | "away" | "busy";
  delivered: number;
  refused: number;
}

/**
 * Delivers what waits, in order, with `send`, until it is all sent, the service is away, or
 * `deadline` (ms since the epoch) passes. Another process delivering: "busy", nothing sent here.
 */
export async function drain(
  folder: string,
  send: (entry: OutboxEntry) => Promise<Delivery>,
  deadline: number,
): Promise<DrainResult> {
  const release = lock(folder);
  if (!release) return { state: "busy", delivered: 0, refused: 0 };
  const result: DrainResult = { state: "done", delivered: 0, refused: 0 };
  try {
    for (;;) {
      const delivering = join(folder, DELIVERING);
      if (!existsSync(delivering)) {
        if (!nonEmpty(join(folder, OUTBOX))) return result;
        renameSync(join(folder, OUTBOX), delivering);
        writeFileSync(join(folder, DELIVERED_COUNT), "0");
      }
      let done = deliveredCount(folder);
      // Read again until nothing new: a hook that opened outbox.jsonl just before the rename
      // appends to this file.
      for (let entries = lines(delivering); done < entries.length; entries = lines(delivering)) {
        while (done < entries.length) {
          if (Date.now() > deadline) {
            result.state = "busy";
            return result;
          }
          const entry = entries[done] as OutboxEntry;
          const delivery = await send(entry);
          if (delivery.outcome === "away") {
            result.state = "away";
            return result;
          }
          if (delivery.outcome === "refused") {
            setAside(folder, entry, delivery.error);
            result.refused += 1;
          } else result.delivered += 1;
          done += 1;
          writeFileSync(join(folder, DELIVERED_COUNT), String(done));
        }
      }
      rmSync(delivering, { force: true });
      rmSync(join(folder, DELIVERED_COUNT), { force: true });
    }
  } finally {
    release();
  }
}
