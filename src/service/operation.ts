import type { ArbeitEvent, EntityType, EventType, Warning } from "../domain/types.js";
import type { StoreTx, TaskStore } from "../store/task-store.js";
import type { Caller } from "./caller.js";

export interface ServiceOptions {
  /** Absolute path of the project root; file paths are stored relative to it. */
  projectRoot: string;
  /** The clock, injectable so that time-based rules (stale context, stale tasks) can be tested. */
  now?: () => Date;
  /** Resolves symlinks in a path before it is checked against the project root. */
  realpath?: (path: string) => string;
}

export interface ServiceDeps {
  store: TaskStore;
  projectRoot: string;
  now(): string;
  nowDate(): Date;
  realpath: (path: string) => string;
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
 * the caller's session and agent and that time.
 */
export interface WriteContext {
  readonly tx: StoreTx;
  readonly deps: ServiceDeps;
  readonly caller: Caller;
  readonly now: string;
  emit(event: {
    event_type: EventType;
    entity_type: EntityType;
    entity_id: string;
    task_id: string | null;
    payload: Record<string, unknown>;
  }): Promise<ArbeitEvent>;
}

export function writeContext(tx: StoreTx, deps: ServiceDeps, caller: Caller): WriteContext {
  const now = deps.now();
  return {
    tx,
    deps,
    caller,
    now,
    emit: (event) => tx.appendEvent({ ...event, session_id: caller.session, agent: caller.agent, timestamp: now }),
  };
}

/** Runs `fn` as one mutation: one write transaction, one caller, one time. */
export function mutate<T>(deps: ServiceDeps, caller: Caller, fn: (w: WriteContext) => Promise<T>): Promise<T> {
  return deps.store.write((tx) => fn(writeContext(tx, deps, caller)));
}
