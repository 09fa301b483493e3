import { openProject } from "../../src/service/project.js";
import type { SqlStore } from "../../src/store/sql/database.js";
import type { TaskStore } from "../../src/store/task-store.js";

/**
 * Where a lease is stored: an open store, or a project's folder (and its Postgres settings, the
 * ARBEIT_DATABASE_* a test gives its processes) when the test drives the project through other
 * processes and opens no store of its own.
 */
export type LeaseHolder = TaskStore | { cwd: string; env?: Record<string, string> };

async function onStore<T>(holder: LeaseHolder, fn: (store: SqlStore) => Promise<T>): Promise<T> {
  if (!("cwd" in holder)) return fn(holder as unknown as SqlStore);
  const service = await openProject({
    cwd: holder.cwd,
    databaseUrl: holder.env?.ARBEIT_DATABASE_URL,
    databaseSchema: holder.env?.ARBEIT_DATABASE_SCHEMA,
  });
  try {
    return await fn(service.store as unknown as SqlStore);
  } finally {
    await service.close();
  }
}

/**
 * Lets a claim's lease run out without waiting for it: its stored end is moved to `secondsAgo`
 * seconds before now, which is what the rows hold once that much time has passed (the rules read
 * a lease's end and compare it with the clock; nothing else records when it was taken). A test can
 * then take a lease long enough to outlast any slow process start, check it is live, and end it at
 * once. Returns the new end as stored.
 */
export async function letLeaseRunOut(holder: LeaseHolder, taskId: string, secondsAgo = 1): Promise<string> {
  const end = new Date(Date.now() - secondsAgo * 1000).toISOString();
  const changed = await onStore(holder, (store) =>
    store.transaction("write", (db) =>
      db.run("UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND lease_expires_at IS NOT NULL", end, taskId),
    ),
  );
  if (changed !== 1) throw new Error(`task ${taskId} holds no lease to run out`);
  return end;
}

/** Lets the live reservations of `pattern` run out the same way: their stored ends moved into the past. */
export async function letReservationRunOut(holder: LeaseHolder, pattern: string, secondsAgo = 1): Promise<string> {
  const end = new Date(Date.now() - secondsAgo * 1000).toISOString();
  const changed = await onStore(holder, (store) =>
    store.transaction("write", (db) =>
      db.run("UPDATE reservations SET expires_at = ? WHERE pattern = ? AND expires_at > ?", end, pattern, end),
    ),
  );
  if (changed === 0) throw new Error(`nobody holds a reservation of ${pattern} to run out`);
  return end;
}

/** Lets a memory entry's time to live pass the same way: its stored expiry moved into the past. */
export async function letMemoryExpire(holder: LeaseHolder, key: string, secondsAgo = 1): Promise<string> {
  const end = new Date(Date.now() - secondsAgo * 1000).toISOString();
  const changed = await onStore(holder, (store) =>
    store.transaction("write", (db) =>
      db.run("UPDATE memory SET expires_at = ? WHERE key = ? AND expires_at IS NOT NULL", end, key),
    ),
  );
  if (changed === 0) throw new Error(`no memory entry ${key} with a time to live`);
  return end;
}
