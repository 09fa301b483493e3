import { after, describe } from "node:test";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import type { Caller } from "../../src/service/caller.js";
import { initProject, openProject } from "../../src/service/project.js";
import type { Envelope } from "../../src/tools/envelope.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { dropSchema, migratedSchema, postgresSkip, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { catalogueCaller } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The hostile-input suite runs every case on both stores: the embedded SQLite file and Postgres.
 * A case gets a fresh initialised project on its engine, with the environment that points the
 * CLI at it, and the service opened in this process.
 */
export type Engine = "sqlite" | "postgres";
export const ENGINES: Engine[] = ["sqlite", "postgres"];

export interface HostileProject {
  engine: Engine;
  dir: string;
  /** What the CLI needs to open this project's store (empty for SQLite). */
  env: Record<string, string>;
  caller: Caller;
  service: ArbeitService;
  /** Runs a tool through the catalogue, as every front end does. */
  call(tool: string, args: unknown, caller?: Partial<Caller>): Promise<Envelope<any>>;
  /** Like call, but throws unless the envelope is a success; returns data. */
  ok(tool: string, args: unknown, caller?: Partial<Caller>): Promise<any>;
  cli(args: string[], options?: { input?: string | Buffer; env?: Record<string, string> }): Promise<CliResult>;
}

/**
 * Declares `describe(name)` once per engine; `project()` inside a test opens a fresh project,
 * closed and removed after the suite. The Postgres half skips visibly without a server (and fails
 * under CI=true, where nothing may skip).
 */
const POSTGRES_SKIP = await postgresSkip();

export function forEachEngine(name: string, body: (project: () => Promise<HostileProject>, engine: Engine) => void) {
  for (const engine of ENGINES) {
    describe(`${name} (${engine})`, { skip: engine === "postgres" ? POSTGRES_SKIP : false }, () => {
      const opened: HostileProject[] = [];
      const cleanups: Array<() => void | Promise<void>> = [];
      after(async () => {
        for (const project of opened) await project.service.close().catch(() => {});
        for (const cleanup of cleanups.reverse()) await cleanup();
      });
      const project = async (): Promise<HostileProject> => {
        const { dir, cleanup } = tempDir("arbeit-hostile-");
        cleanups.push(cleanup);
        const env: Record<string, string> = {};
        if (engine === "postgres") {
          const schema = await migratedSchema("arbeit_hostile");
          cleanups.push(() => dropSchema(schema));
          env.ARBEIT_DATABASE_URL = TEST_DATABASE_URL;
          env.ARBEIT_DATABASE_SCHEMA = schema;
        }
        const locate = { cwd: dir, databaseUrl: env.ARBEIT_DATABASE_URL, databaseSchema: env.ARBEIT_DATABASE_SCHEMA };
        await initProject(locate);
        const service = await openProject(locate);
        const caller: Caller = { session: "ses-hostile", agent: "hostile" };
        const call = catalogueCaller(service, caller, dir);
        const project: HostileProject = {
          engine,
          dir,
          env,
          caller,
          service,
          call,
          async ok(tool, args, override) {
            const envelope = await call(tool, args, override);
            if (!envelope.success) throw new Error(`${tool} failed: ${JSON.stringify(envelope.error)}`);
            return envelope.data;
          },
          cli: (args, options = {}) =>
            runCli(args, { cwd: dir, env: { ...env, ...options.env }, input: options.input }),
        };
        opened.push(project);
        return project;
      };
      body(project, engine);
    });
  }
}
