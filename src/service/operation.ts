import { leaseState } from "../domain/claims.js";
import { agentSession } from "../domain/identity.js";
import type { ArbeitEvent, EntityType, EventType, Task, Warning } from "../domain/types.js";
import type { StoreTx, TaskStore } from "../store/task-store.js";
import type { Caller } from "./caller.js";

export interface ServiceOptions {
  /** Absolute path of the project root; file paths are stored relative to it. */
  projectRoot: string;
  /** The clock, injectable so that time-based rules (stale context, stale tasks) can be tested. */
  now?: () => Date;
  /**
   * Resolves symlinks in an absolute path before it is checked against the project root; null
   * when it cannot be resolved (a symlink loop). Defaults to walking the real filesystem.
   */
  realpath?: (path: string) => string | null;
}

export interface ServiceDeps {
  store: TaskStore;
  projectRoot: string;
  now(): string;
  nowDate(): Date;
  realpath: (path: string) => string | null;
}

/** What every operation returns: its data and any non-fatal warnings. */
export interface Result<T> {
  data: T;
  warnings: Warning[];
}

export function ok<T>(data: T, warnings: Warning[] = []): Result<T> {
  return { data, warnings };
}

/**
 * What one mutation works with: its transaction, its caller, and its time, read once so that
 * every row and event it writes carries the same instant. `emit` appends an event stamped with
 * the caller's session and agent and that time. `databaseNow` is the database's time, which
 * leases run on.
 */
export interface WriteContext {
  readonly tx: StoreTx;
  readonly deps: ServiceDeps;
  readonly caller: Caller;
  /** The session acting: the caller's, or `agent:<name>` for a caller without one. */
  readonly session: string;
  readonly now: string;
  readonly databaseNow: string;
  emit(event: NewServiceEvent): Promise<void>;
  /** As `emit`, giving the event with its seq: on Postgres the promise settles with the COMMIT's round trip, so await it after the mutation. */
  record(event: NewServiceEvent): Promise<ArbeitEvent>;
  /**
   * Counts as activity on the task by this session (or by `holder`, the session it works for):
   * a lease that session holds there is renewed.
   */
  touched(taskId: string, holder?: string): void;
  /**
   * The task as this mutation read it: where it shows no live lease of the session's, the
   * mutation's activity sends no renewal for it. A lease is only ever given by a claim, which
   * sets a fresh one (and is never renewed by activity), so nothing could come to need one.
   */
  read(task: Pick<Task, "id" | "claim_session" | "lease_expires_at">): void;
}

type NewServiceEvent = {
  event_type: EventType;
  entity_type: EntityType;
  entity_id: string;
  task_id: string | null;
  payload: Record<string, unknown>;
};

/** Events that set a lease themselves: activity renewal must not override the lease they chose. */
const CLAIM_EVENTS = new Set<EventType>(["task_claimed", "claim_renewed", "claim_released", "claim_expired"]);

export function writeContext(
  tx: StoreTx,
  deps: ServiceDeps,
  caller: Caller,
): WriteContext & { renewLeases(): Promise<void> } {
  const now = deps.now();
  const databaseNow = tx.databaseNow();
  const session = caller.session ?? agentSession(caller.agent);
  const active = new Map<string, string>();
  const claimed = new Set<string>();
  const read = new Map<string, Pick<Task, "claim_session" | "lease_expires_at">>();
  const stamp = (event: NewServiceEvent) => {
    if (event.task_id !== null) {
      if (CLAIM_EVENTS.has(event.event_type)) claimed.add(event.task_id);
      else if (!active.has(event.task_id)) active.set(event.task_id, session);
    }
    const payload = caller.token === undefined ? event.payload : { ...event.payload, token_id: caller.token };
    return { ...event, payload, session_id: session, agent: caller.agent, timestamp: now };
  };
  return {
    tx,
    deps,
    caller,
    session,
    now,
    databaseNow,
    emit: (event) => tx.recordEvent(stamp(event)),
    record: (event) => {
      const appended = tx.appendEvent(stamp(event));
      // Settled after the transaction when it fails: the mutation's own error is the one reported.
      appended.catch(() => {});
      return appended;
    },
    touched: (taskId, holder = session) => void active.set(taskId, holder),
    read: (task) => void read.set(task.id, task),
    /**
     * The holder's activity keeps its claim and its file reservations: every task this mutation
     * wrote to (or the session touched a file for) whose lease the session holds runs its own
     * lease length from now again, on the database's clock, and so does each live reservation of
     * that session. No version, no event: it changes nothing anyone reads as the task, only how
     * long the claim lives.
     */
    async renewLeases() {
      if (active.size === 0) return;
      // Sent without waiting for an answer: they travel with the transaction's COMMIT.
      for (const [id, holder] of active) {
        const seen = read.get(id);
        if (claimed.has(id) || (seen !== undefined && leaseState(seen, holder, databaseNow) !== "mine")) continue;
        tx.renewLease(id, holder, databaseNow);
      }
      for (const holder of new Set(active.values())) tx.renewReservationsLater(holder, databaseNow);
    },
  };
}

/**
 * Runs `fn` as one mutation: one write transaction, one caller, one time. The acting session's
 * writes take turns (StoreTx.lockSession) from before `fn` reads anything, so that what `fn`
 * checks of the session (its one live task, what it already recorded) holds when it writes, also
 * where the store runs a session's calls side by side.
 */
export function mutate<T>(deps: ServiceDeps, caller: Caller, fn: (w: WriteContext) => Promise<T>): Promise<T> {
  return deps.store.write(async (tx) => {
    const w = writeContext(tx, deps, caller);
    tx.lockSession(w.session);
    const result = await fn(w);
    await w.renewLeases();
    return result;
  });
}
