import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import type { Caller } from "../../src/service/caller.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { findTool } from "../../src/tools/catalogue.js";
import type { ToolContext } from "../../src/tools/define.js";
import { type Envelope, invokeTool } from "../../src/tools/envelope.js";
import { tempDir } from "./temp.js";

/** A settable clock for rules that depend on time (stale context, stale tasks). */
export class TestClock {
  constructor(public current = new Date("2026-01-01T00:00:00.000Z")) {}
  now = (): Date => new Date(this.current);
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
  advanceDays(days: number): void {
    this.advance(days * 86_400_000);
  }
}

export interface TestProject {
  dir: string;
  dbPath: string;
  service: ArbeitService;
  store: SqliteTaskStore;
  clock: TestClock;
  caller: Caller;
  /** Runs a tool through the catalogue exactly as every front end does. */
  call(tool: string, args: unknown, caller?: Partial<Caller>): Promise<Envelope<any>>;
  /** Like call, but fails the test unless the envelope is a success; returns data. */
  ok(tool: string, args: unknown, caller?: Partial<Caller>): Promise<any>;
  close(): Promise<void>;
}

/** Runs a tool through the catalogue exactly as every front end does, as `caller` (overridable per call). */
export function catalogueCaller(service: ArbeitService, caller: Caller, cwd: string) {
  return (tool: string, args: unknown, override: Partial<Caller> = {}): Promise<Envelope<any>> => {
    const def = findTool(tool);
    if (!def) throw new Error(`no tool ${tool}`);
    const ctx: ToolContext = { caller: { ...caller, ...override }, cwd, service: async () => service };
    return invokeTool(def, args, ctx) as Promise<Envelope<any>>;
  };
}

/** A real SQLite file in a temp project with `.arbeit/`, opened through the real service. */
export async function openTestProject(
  options: { clock?: TestClock; caller?: Partial<Caller> } = {},
): Promise<TestProject> {
  const { dir, cleanup } = tempDir();
  mkdirSync(join(dir, ".arbeit"));
  const dbPath = join(dir, ".arbeit", "arbeit.db");
  const clock = options.clock ?? new TestClock();
  // One machine, one clock: the database's time (leases) moves with the service's.
  const store = await SqliteTaskStore.open(dbPath, { clock: clock.now });
  return {
    ...serviceOn(store, dir, clock, options.caller),
    dbPath,
    async close() {
      await store.close();
      cleanup();
    },
  };
}

/**
 * The real service over `store` in `dir`, on `clock`, called through the catalogue as the test
 * caller (or as one given per call): what a test project offers whatever its engine.
 */
export function serviceOn<S extends TaskStore>(store: S, dir: string, clock: TestClock, caller?: Partial<Caller>) {
  const service = new ArbeitService(store, { projectRoot: dir, now: clock.now });
  const defaultCaller: Caller = { session: "ses-test", agent: "tester", ...caller };
  const call = catalogueCaller(service, defaultCaller, dir);
  return {
    dir,
    service,
    store,
    clock,
    caller: defaultCaller,
    call,
    async ok(tool: string, args: unknown, override?: Partial<Caller>): Promise<any> {
      const envelope = await call(tool, args, override);
      if (!envelope.success) throw new Error(`${tool} failed: ${JSON.stringify(envelope.error)}`);
      return envelope.data;
    },
  };
}
