import type { SqlStore } from "../../src/store/sql/database.js";
import type { TaskStore } from "../../src/store/task-store.js";

/**
 * Lets a claim's lease run out without waiting for it: its stored end is moved to `secondsAgo`
 * seconds before now, which is what the rows hold once that much time has passed (the rules read
 * a lease's end and compare it with the clock; nothing else records when it was taken). A test can
 * then take a lease long enough to outlast any slow process start, check it is live, and end it at
 * once. Returns the new end as stored.
 */
export async function letLeaseRunOut(store: TaskStore, taskId: string, secondsAgo = 1): Promise<string> {
  const end = new Date(Date.now() - secondsAgo * 1000).toISOString();
  const changed = await (store as unknown as SqlStore).transaction("write", (db) =>
    db.run("UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND lease_expires_at IS NOT NULL", end, taskId),
  );
  if (changed !== 1) throw new Error(`task ${taskId} holds no lease to run out`);
  return end;
}

/** Lets the live reservations of `pattern` run out the same way: their stored ends moved into the past. */
export async function letReservationRunOut(store: TaskStore, pattern: string, secondsAgo = 1): Promise<string> {
  const end = new Date(Date.now() - secondsAgo * 1000).toISOString();
  const changed = await (store as unknown as SqlStore).transaction("write", (db) =>
    db.run("UPDATE reservations SET expires_at = ? WHERE pattern = ? AND expires_at > ?", end, pattern, end),
  );
  if (changed === 0) throw new Error(`nobody holds a reservation of ${pattern} to run out`);
  return end;
}
