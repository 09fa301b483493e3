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

/** What every operation returns: its data and any non-fatal warnings (seed 000 §7). */
export interface Result<T> {
  data: T;
  warnings: Warning[];
}

export function ok<T>(data: T, warnings: Warning[] = []): Result<T> {
  return { data, warnings };
}

export function emit(
  tx: StoreTx,
  deps: ServiceDeps,
  caller: Caller,
  event: {
    event_type: EventType;
    entity_type: EntityType;
    entity_id: string;
    task_id: string | null;
    payload: Record<string, unknown>;
  },
  timestamp: string = deps.now(),
): Promise<ArbeitEvent> {
  return tx.appendEvent({ ...event, session_id: caller.session, agent: caller.agent, timestamp });
}
