import { ArbeitService } from "../src/service/arbeit-service.js";
import type { Caller } from "../src/service/caller.js";
import { PostgresTaskStore } from "../src/store/postgres/postgres-task-store.js";
import type { SqlStore } from "../src/store/sql/database.js";
import { SqliteTaskStore } from "../src/store/sqlite/sqlite-task-store.js";
import type { TaskStore } from "../src/store/task-store.js";
import { findTool } from "../src/tools/catalogue.js";
import type { ToolContext } from "../src/tools/define.js";
import { type Envelope, invokeTool } from "../src/tools/envelope.js";

/**
 * The path an agent's call takes: the catalogue's tool, its zod schema, invokeTool's envelope,
 * the service and the real SQLite store on the dataset copy. Nothing is stubbed.
 */
export interface Harness {
  dbPath: string;
  projectDir: string;
  store: TaskStore & SqlStore;
  /** Runs one tool call exactly as a front end does. */
  call(tool: string, args: unknown, caller?: Partial<Caller>): Promise<Envelope>;
  hasTool(name: string): boolean;
  close(): Promise<void>;
}

export const BENCH_CALLER: Caller = { session: "ses-bench-runner", agent: "bench-runner" };

/**
 * Where a bench store lives: a SQLite file path, or `<postgres URL>|<schema>` for the dataset
 * loaded into Postgres (one string, so it can be handed to worker processes as an argument).
 */
export function postgresLocation(url: string, schema: string): string {
  return `${url}|${schema}`;
}

/** The Postgres URL and schema of a bench location; undefined for a SQLite file. */
export function postgresOf(location: string): { url: string; schema: string } | undefined {
  if (!location.includes("://")) return undefined;
  const bar = location.lastIndexOf("|");
  return { url: location.slice(0, bar), schema: location.slice(bar + 1) };
}

export async function openBenchStore(location: string): Promise<TaskStore & SqlStore> {
  const postgres = postgresOf(location);
  if (!postgres) return SqliteTaskStore.open(location);
  return PostgresTaskStore.open(postgres.url, { schema: postgres.schema });
}

export async function openHarness(dbPath: string, projectDir: string): Promise<Harness> {
  const store = await openBenchStore(dbPath);
  const service = new ArbeitService(store, { projectRoot: projectDir });
  return {
    dbPath,
    projectDir,
    store,
    call(name, args, caller = {}) {
      const tool = findTool(name);
      if (!tool) throw new Error(`The catalogue has no tool ${name}.`);
      const ctx: ToolContext = {
        caller: { ...BENCH_CALLER, ...caller },
        cwd: projectDir,
        db: dbPath,
        service: async () => service,
      };
      return invokeTool(tool, args, ctx);
    },
    hasTool: (name) => findTool(name) !== undefined,
    close: () => store.close(),
  };
}

/** Throws unless the envelope is a success (or the expected error code). */
export function expectEnvelope(envelope: Envelope, label: string, errorCode?: string): void {
  if (errorCode === undefined) {
    if (!envelope.success) throw new Error(`${label} failed: ${JSON.stringify(envelope.error)}`);
    return;
  }
  if (envelope.success || envelope.error.code !== errorCode) {
    throw new Error(`${label}: expected ${errorCode}, got ${JSON.stringify(envelope).slice(0, 300)}`);
  }
}
