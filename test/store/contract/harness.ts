import assert from "node:assert/strict";
import { afterEach, beforeEach, describe } from "node:test";
import type { ErrorBody } from "../../../src/domain/errors.js";
import type { ArbeitService } from "../../../src/service/arbeit-service.js";
import type { Caller } from "../../../src/service/caller.js";
import type { StoreTx, TaskStore } from "../../../src/store/task-store.js";
import { findTool } from "../../../src/tools/catalogue.js";
import type { ToolContext } from "../../../src/tools/define.js";
import { type Envelope, invokeTool } from "../../../src/tools/envelope.js";
import type { TestClock } from "../../helpers/service.js";

/**
 * The store contract suite runs unchanged on every TaskStore implementation. A factory hands it
 * a fresh, empty store wrapped in the real service; the suite drives everything through the tool
 * catalogue (as every front end does) and through StoreTx where it checks the store itself. No
 * raw SQL: the same tests must hold on SQLite under Node, SQLite under Bun, and Postgres.
 */
export interface StoreUnderTest {
  store: TaskStore;
  service: ArbeitService;
  clock: TestClock;
  /** The project root: file paths are recorded relative to it. */
  root: string;
  /** An independent handle on the same data: another connection (SQLite) or pool (Postgres). */
  openPeer(): Promise<TaskStore>;
  close(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

export interface ContractOptions {
  /**
   * Whether peers opened in this process can write at the same moment. Both stores can: SQLite
   * stores on one file share a per-file mutex (src/store/mutex.ts) so they take turns rather than
   * block each other on SQLite's lock; separate processes are tested in
   * test/multi-agent/concurrency.process.test.ts.
   */
  concurrentPeers: boolean;
}

export const alice: Caller = { session: "ses-alice", agent: "alice" };
export const bob: Caller = { session: "ses-bob", agent: "bob" };

export interface ContractProject extends StoreUnderTest {
  /** Runs a tool through the catalogue; never throws. */
  call(tool: string, args: unknown, caller?: Partial<Caller>): Promise<Envelope<any>>;
  /** Runs a tool and returns its data, failing the test on an error envelope. */
  ok(tool: string, args: unknown, caller?: Partial<Caller>): Promise<any>;
  /** Runs a tool that must fail and returns the error body. */
  fail(tool: string, args: unknown, caller?: Partial<Caller>): Promise<ErrorBody & { details?: any }>;
  /** Creates a task and returns its id. */
  task(title: string, extra?: Record<string, unknown>, caller?: Partial<Caller>): Promise<string>;
  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** The newest event seq: unchanged means nothing was written. */
  lastSeq(): Promise<number>;
}

export function contractProject(base: StoreUnderTest, service: ArbeitService = base.service): ContractProject {
  const call = (tool: string, args: unknown, override: Partial<Caller> = {}) => {
    const def = findTool(tool);
    if (!def) throw new Error(`no tool ${tool}`);
    const ctx: ToolContext = { caller: { ...alice, ...override }, cwd: base.root, service: async () => service };
    return invokeTool(def, args, ctx) as Promise<Envelope<any>>;
  };
  const ok = async (tool: string, args: unknown, override?: Partial<Caller>) => {
    const envelope = await call(tool, args, override);
    if (!envelope.success) throw new Error(`${tool} failed: ${JSON.stringify(envelope.error)}`);
    return envelope.data;
  };
  return {
    ...base,
    service,
    store: service.store,
    call,
    ok,
    async fail(tool, args, override) {
      const envelope = await call(tool, args, override);
      assert.equal(envelope.success, false, `${tool} should fail: ${JSON.stringify(envelope)}`);
      return (envelope as { error: ErrorBody }).error;
    },
    async task(title, extra = {}, override) {
      return (await ok("arbeit_task_create", { title, ...extra }, override)).task.id;
    },
    read: (fn) => service.store.read(fn),
    lastSeq: () => service.store.read((tx) => tx.maxEventSeq()),
  };
}

/**
 * A describe whose tests share one useStore() slot and so run one at a time, even when an entry
 * file lets whole suites run side by side (each test has a store of its own either way).
 */
export function suite(name: string, fn: () => void, options: { timeout?: number } = {}): void {
  describe(name, { concurrency: 1, ...options }, fn);
}

/** A fresh store for every test of the enclosing describe; returns a getter for it. */
export function useStore(factory: StoreFactory): () => ContractProject {
  let project: ContractProject | undefined;
  beforeEach(async () => {
    project = contractProject(await factory());
  });
  afterEach(async () => {
    await project?.close();
    project = undefined;
  });
  return () => {
    if (!project) throw new Error("no store: useStore() runs before each test");
    return project;
  };
}

export const ids = (rows: Array<{ id: string }>): string[] => rows.map((row) => row.id);
