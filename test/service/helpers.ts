import assert from "node:assert/strict";
import { afterEach, beforeEach } from "node:test";
import type { ErrorBody } from "../../src/domain/errors.js";
import type { ArbeitEvent, Task } from "../../src/domain/types.js";
import type { Envelope } from "../../src/tools/envelope.js";
import { openTestProject, type TestClock, type TestProject } from "../helpers/service.js";

/**
 * Shared setup for the service specifications: every call goes through the tool catalogue
 * (openTestProject().call / ok), exactly as the front ends do.
 */

/** A fresh project for every test of the enclosing describe; returns a getter for it. */
export function useProject(options: { clock?: () => TestClock } = {}): () => TestProject {
  let project: TestProject | undefined;
  beforeEach(async () => {
    project = await openTestProject(options.clock ? { clock: options.clock() } : {});
  });
  afterEach(async () => {
    await project?.close();
    project = undefined;
  });
  return () => {
    if (!project) throw new Error("no project: useProject() runs before each test");
    return project;
  };
}

/** Values that satisfy every task type's required fields. */
export const FILLED = {
  intent: "Users need it",
  description: "What it does",
  plan: "Plan:\n- Changes:\n  - do it",
} as const;

/** Creates a task through arbeit_task_create and returns it. */
export async function createTask(p: TestProject, title: string, fields: Record<string, unknown> = {}): Promise<Task> {
  return (await p.ok("arbeit_task_create", { title, ...fields })).task as Task;
}

/** Creates plain tasks with the given titles, in order. */
export async function createTasks(p: TestProject, ...titles: string[]): Promise<Task[]> {
  const out: Task[] = [];
  for (const title of titles) out.push(await createTask(p, title));
  return out;
}

export async function getTask(p: TestProject, taskId: string): Promise<Task> {
  return (await p.ok("arbeit_task_get", { task_id: taskId })).task as Task;
}

export async function updateTask(p: TestProject, taskId: string, fields: Record<string, unknown>): Promise<any> {
  return p.ok("arbeit_task_update", { task_id: taskId, ...fields });
}

/** A parent chain root -> ... of `levels` tasks; returns them root first. */
export async function createChain(p: TestProject, levels: number, prefix = "level"): Promise<Task[]> {
  const chain: Task[] = [];
  for (let level = 1; level <= levels; level++) {
    const parent = chain.at(-1);
    chain.push(await createTask(p, `${prefix} ${level}`, parent ? { parent_id: parent.id } : {}));
  }
  return chain;
}

/** Runs a relationship action through arbeit_relationship and returns the envelope. */
export function relate(
  p: TestProject,
  action: "add" | "remove",
  from: string,
  type: string,
  to: string,
  extra: Record<string, unknown> = {},
  caller?: Parameters<TestProject["call"]>[2],
): Promise<Envelope<any>> {
  return p.call("arbeit_relationship", { action, from_task_id: from, to_task_id: to, type, ...extra }, caller);
}

/** Runs a named query and returns its data. */
export function query(p: TestProject, name: string, params?: Record<string, unknown>): Promise<any> {
  return p.ok("arbeit_query", params === undefined ? { query: name } : { query: name, params });
}

/** Ids of the tasks a query returned, in order. */
export async function queryIds(p: TestProject, name: string, params?: Record<string, unknown>): Promise<string[]> {
  return ((await query(p, name, params)).tasks as Array<{ id: string }>).map((task) => task.id);
}

/** Asserts a failed envelope with `code`, a message and suggestions; returns the error. */
export function expectError(envelope: Envelope<unknown>, code: string): ErrorBody {
  assert.equal(envelope.success, false, `expected ${code}, got success: ${JSON.stringify(envelope)}`);
  if (envelope.success) throw new Error("unreachable");
  assert.equal(envelope.error.code, code, `expected ${code}, got ${JSON.stringify(envelope.error)}`);
  assert.equal(typeof envelope.error.message, "string");
  assert.ok(envelope.error.message.length > 0, "error message is empty");
  assert.ok(Array.isArray(envelope.error.suggestions), `no suggestions on ${code}`);
  assert.ok(envelope.error.suggestions.length > 0, `empty suggestions on ${code}`);
  return envelope.error;
}

/** Calls a tool and asserts it fails with `code`. */
export async function expectCallError(
  p: TestProject,
  tool: string,
  args: unknown,
  code: string,
  caller?: Parameters<TestProject["call"]>[2],
): Promise<ErrorBody> {
  return expectError(await p.call(tool, args, caller), code);
}

/** Runs a named query and asserts it fails with `code`. */
export function expectQueryError(
  p: TestProject,
  name: string,
  params: Record<string, unknown> | undefined,
  code: string,
): Promise<ErrorBody> {
  return expectCallError(p, "arbeit_query", params === undefined ? { query: name } : { query: name, params }, code);
}

export function warningCodes(envelope: Envelope<unknown>): string[] {
  return (envelope.warnings ?? []).map((warning) => warning.code);
}

/** Every event, oldest first, through the events query. */
export async function events(p: TestProject, params: Record<string, unknown> = {}): Promise<ArbeitEvent[]> {
  return (await query(p, "events", { limit: 1000, ...params })).events as ArbeitEvent[];
}

export function maxSeq(p: TestProject): number {
  const row = p.store.driver.prepare("SELECT COALESCE(MAX(seq), 0) AS seq FROM events").get<{ seq: number }>();
  return Number(row?.seq ?? 0);
}

/** Rows read straight from SQLite, past every soft-delete filter. */
export function rawRows(p: TestProject, sql: string, ...params: string[]): Array<Record<string, unknown>> {
  return p.store.driver.prepare(sql).all(...params);
}

/** Every row of every table (whatever the migrations created), for "nothing was written" checks. */
export function snapshot(p: TestProject): Record<string, { count: number; rows: string[] }> {
  const tables = rawRows(p, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  const out: Record<string, { count: number; rows: string[] }> = {};
  for (const { name } of tables) {
    const rows = rawRows(p, `SELECT * FROM "${String(name)}"`).map((row) => JSON.stringify(row));
    out[String(name)] = { count: rows.length, rows: rows.sort() };
  }
  return out;
}

/** Asserts that `run` leaves the database exactly as it was (rows of every table, event seq). */
export async function assertWritesNothing(p: TestProject, run: () => Promise<unknown>): Promise<void> {
  const before = snapshot(p);
  const seq = maxSeq(p);
  await run();
  assert.equal(maxSeq(p), seq, "the event log grew");
  assert.deepEqual(snapshot(p), before);
}

/** Like relate, but returns the data and fails the test unless the call succeeded. */
export async function relateOk(...args: Parameters<typeof relate>): Promise<any> {
  const envelope = await relate(...args);
  if (!envelope.success) throw new Error(`arbeit_relationship failed: ${JSON.stringify(envelope.error)}`);
  return envelope.data;
}
