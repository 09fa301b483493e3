import assert from "node:assert/strict";
import { leaseState } from "../../src/domain/claims.js";
import { ERROR_CODES } from "../../src/domain/errors.js";
import { ruleFindings } from "../../src/maintenance/doctor.js";
import { historyFindings } from "../../src/maintenance/history-check.js";
import type { Caller } from "../../src/service/caller.js";
import type { SqlDriver } from "../../src/store/sqlite/driver.js";
import { SqliteDb } from "../../src/store/sqlite/sqlite-db.js";
import { TOOLS } from "../../src/tools/catalogue.js";
import type { Envelope } from "../../src/tools/envelope.js";
import { openTestProject, type TestProject } from "../helpers/service.js";
import { aimed, garbage, type Plan, plausible, Rng, schemaDerived, toolSchema } from "./generate.js";
import { canonicalEdge, Model } from "./model.js";

/** The fields of the batched tools that hold ids: only these read "$<ref>" (docs/cli.md). */
const BATCH_ID_FIELDS = new Set([
  "task_id",
  "parent_id",
  "blocked_by",
  "supersede_entry_id",
  "item_ids",
  "from_task_id",
  "to_task_id",
]);

/**
 * One fuzz run: a fresh project, a sequence of steps (tool calls of every kind, and time passing),
 * and after every step the checks of test/fuzz: a well-formed envelope, never INTERNAL_ERROR,
 * the predicted error for aimed calls, exactly the expected events for a success and none for a
 * failure, the model equal to the database, no cycle, depth <= 4, one parent, integrity_check.
 */
export type Mode = "plausible" | "aimed" | "schema" | "garbage" | "replay";
export type Step =
  | { kind: "call"; tool: string; mode: Mode; seed: number; agent: number; session: number }
  | { kind: "tick"; ms: number };

export const TOOL_NAMES = TOOLS.map((tool) => tool.name);
const AGENTS = ["agent-a", "agent-b", "agent-c"];
const SESSIONS = ["ses-1", "ses-2", "ses-3"];

export interface RunOptions {
  /** Run PRAGMA integrity_check after every n-th step (1: every step). */
  integrityEvery: number;
  /** Replay the whole event log against the rows (doctor's history check) every n-th step. */
  historyEvery: number;
}

export interface Stats {
  calls: number;
  successes: number;
  codes: Map<string, number>;
  /** Event types written per successful tool call: tool -> "a+b" -> count. */
  eventRules: Map<string, Map<string, number>>;
}

export function newStats(): Stats {
  return { calls: 0, successes: 0, codes: new Map(), eventRules: new Map() };
}

interface Logged {
  tool: string;
  args: Record<string, unknown>;
  caller: Caller;
  envelope: Envelope<any>;
}

interface World {
  project: TestProject;
  model: Model;
  driver: SqlDriver;
  /** Successful calls made with a request_id, for replays. */
  requests: Logged[];
  stats: Stats;
  step: number;
  options: RunOptions;
}

const MUTATING = new Set(TOOL_NAMES.filter((name) => "request_id" in (toolSchema(name).properties ?? {})));

export async function runSteps(steps: readonly Step[], stats: Stats, options: RunOptions): Promise<void> {
  const project = await openTestProject();
  const world: World = {
    project,
    model: new Model(),
    driver: project.store.driver,
    requests: [],
    stats,
    step: 0,
    options,
  };
  try {
    for (const step of steps) {
      world.step++;
      if (step.kind === "tick") project.clock.advance(step.ms);
      else await runCall(world, step);
    }
    await assertHistory(world);
  } finally {
    await project.close();
  }
}

function planFor(world: World, step: Extract<Step, { kind: "call" }>, rng: Rng): { plan: Plan; replay?: Logged } {
  if (step.mode === "replay") {
    const logged = rng.pick(world.requests);
    if (logged)
      return { plan: { tool: logged.tool, args: logged.args, aim: "replay of a request_id" }, replay: logged };
  }
  if (step.mode === "aimed") {
    const plan = aimed(rng, world.model);
    if (plan) return { plan };
  }
  if (step.mode === "schema") return { plan: schemaDerived(step.tool, rng, world.model) };
  if (step.mode === "garbage") return { plan: garbage(step.tool, rng) };
  const plan = plausible(step.tool, rng, world.model);
  if (MUTATING.has(plan.tool) && rng.chance(0.25) && typeof plan.args === "object" && plan.args !== null) {
    (plan.args as Record<string, unknown>).request_id = `req-${step.seed}`;
  }
  return { plan };
}

async function runCall(world: World, step: Extract<Step, { kind: "call" }>): Promise<void> {
  const rng = new Rng(step.seed);
  const planned = planFor(world, step, rng);
  const plan = planned.plan;
  const caller: Caller = planned.replay?.caller ?? { session: SESSIONS[step.session]!, agent: AGENTS[step.agent]! };
  // A request_id this session already used successfully: the same call is a replay, another is refused.
  const requestId = (plan.args as { request_id?: unknown } | null)?.request_id;
  const prior = world.requests.find((r) => r.caller.session === caller.session && r.args.request_id === requestId);
  const same =
    prior !== undefined && prior.tool === plan.tool && JSON.stringify(prior.args) === JSON.stringify(plan.args);
  const replay = same ? prior : undefined;
  if (prior && !same) plan.expect = "INVALID_ARGUMENT";
  const context = () =>
    `step ${world.step}: ${plan.tool} (${plan.aim}) ${JSON.stringify(plan.args)?.slice(0, 600)} as ${caller.agent}`;
  const pre = preState(world, plan, caller);
  const envelope = await world.project.call(plan.tool, plan.args, caller);
  world.stats.calls++;

  assertEnvelope(envelope, context);
  const code = envelope.success ? "OK" : envelope.error.code;
  world.stats.codes.set(code, (world.stats.codes.get(code) ?? 0) + 1);
  assert.notEqual(code, "INTERNAL_ERROR", `${context()}\n${JSON.stringify(envelope)}`);
  if (plan.expect) assert.equal(code, plan.expect, `${context()}\n${JSON.stringify(envelope).slice(0, 500)}`);
  if (plan.tool === "arbeit_relationship") assertHeldNotReshaped(envelope, pre, context);

  const written = world.driver
    .prepare("SELECT event_type FROM events WHERE seq > ? ORDER BY seq")
    .all<{ event_type: string }>(pre.seq)
    .map((e) => e.event_type);
  if (!envelope.success) {
    assert.deepEqual(written, [], `a failed call wrote events: ${context()}`);
  } else {
    world.stats.successes++;
    // A success means the arguments parsed: an object, or nothing at all (read as {}).
    const args = (plan.args ?? {}) as Record<string, unknown>;
    if (replay) {
      assert.deepEqual(envelope, replay.envelope, `a replayed request_id answered differently: ${context()}`);
      assert.deepEqual(written, [], `a replayed request_id wrote events: ${context()}`);
    } else {
      const expected = expectedEvents(plan.tool, args, envelope.data, pre);
      if (expected !== undefined) {
        assert.deepEqual(
          [...written].sort(),
          [...expected].sort(),
          `events of ${context()}\n${JSON.stringify(envelope.data).slice(0, 400)}`,
        );
      }
      recordRule(world.stats, plan.tool, args, written);
      if (typeof args.request_id === "string") world.requests.push({ tool: plan.tool, args, caller, envelope });
      applyToModel(world, plan.tool, args, envelope.data, caller);
    }
  }
  assertGraph(world, context);
  assertModel(world, context);
  if (world.step % world.options.integrityEvery === 0) {
    assert.deepEqual(world.driver.prepare("PRAGMA integrity_check").all(), [{ integrity_check: "ok" }]);
  }
  if (world.step % world.options.historyEvery === 0) await assertHistory(world);
}

/**
 * Only the holder gives a task it holds another parent or blocker: an edge that would is refused
 * with ALREADY_CLAIMED, and ALREADY_CLAIMED means exactly that. An edge that is wrong in itself
 * (a cycle, a self edge, a second parent, too deep) fails for that reason even on a held task:
 * the aimed calls' predicted codes hold whoever holds their tasks.
 */
function assertHeldNotReshaped(envelope: Envelope<any>, pre: Pre, context: () => string): void {
  const code = envelope.success ? "OK" : envelope.error.code;
  const changed = envelope.success && (envelope.data.relationship !== undefined || envelope.data.removed === true);
  assert.ok(!(changed && pre.reshapesHeld), `reshaped a task another session holds: ${context()}`);
  assert.ok(
    code !== "ALREADY_CLAIMED" || pre.reshapesHeld,
    `ALREADY_CLAIMED for a task nobody else holds: ${context()}`,
  );
}

function assertEnvelope(envelope: Envelope<any>, context: () => string): void {
  const keys = Object.keys(envelope).sort();
  assert.equal(typeof envelope.success, "boolean", context());
  if (envelope.success) {
    assert.ok(
      keys.every((k) => ["success", "data", "warnings"].includes(k)),
      `envelope keys ${keys}: ${context()}`,
    );
    assert.ok("data" in envelope, context());
  } else {
    assert.ok(
      keys.every((k) => ["success", "error", "warnings"].includes(k)),
      `envelope keys ${keys}: ${context()}`,
    );
    assert.ok((ERROR_CODES as string[]).includes(envelope.error.code), `unknown code ${envelope.error.code}`);
    assert.equal(typeof envelope.error.message, "string");
    assert.ok(envelope.error.message.length > 0);
  }
  if (envelope.warnings !== undefined) {
    assert.ok(Array.isArray(envelope.warnings) && envelope.warnings.length > 0, context());
    for (const warning of envelope.warnings) {
      assert.equal(typeof warning.code, "string");
      assert.equal(typeof warning.message, "string");
    }
  }
  assert.doesNotThrow(() => JSON.stringify(envelope));
}

// ---- events ----------------------------------------------------------------------------------

interface Pre {
  seq: number;
  /** Claims whose lease has run out: swept (claim_expired each) by claim, start_work, resume. */
  expired: number;
  /** start_work: the session already works on this very task (nothing to do). */
  alreadyWorking: boolean;
  /** start_work: the caller may take the claim (nobody holds a live lease, or it is the caller's). */
  leaseFree: boolean;
  /** progress_complete: tasks with items still pending among the ids. */
  pendingTasks: number;
  /** The version, status and owner of args.task_id before the call. */
  version: number;
  status: string | null;
  owner: string | null;
  /** The task the call's session was working on before the call. */
  activeTask: string | null;
  agent: string | null;
  /** args.task_id: whether the caller's session holds a live lease on it, and any lease at all. */
  leaseMine: boolean;
  leased: boolean;
  /** args.task_id: how many sessions work on it. */
  workingSessions: number;
  /** arbeit_relationship: the edge gives a task another session holds live another parent or blocker. */
  reshapesHeld: boolean;
}

function preState(world: World, plan: Plan, caller: Caller): Pre {
  const d = world.driver;
  const now = world.project.clock.now().toISOString();
  const args = (typeof plan.args === "object" && plan.args !== null ? plan.args : {}) as Record<string, unknown>;
  const pre: Pre = {
    seq: d.prepare("SELECT COALESCE(MAX(seq), 0) AS seq FROM events").get<{ seq: number }>()!.seq,
    expired: d
      .prepare(
        `SELECT COUNT(*) AS n FROM tasks WHERE deleted_at IS NULL AND owner IS NOT NULL
         AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?`,
      )
      .get<{ n: number }>(now)!.n,
    alreadyWorking: false,
    leaseFree: false,
    pendingTasks: 0,
    version: 0,
    status: null,
    owner: null,
    activeTask: null,
    agent: caller.agent,
    leaseMine: false,
    leased: false,
    workingSessions: 0,
    reshapesHeld: false,
  };
  const session = typeof args.session === "string" ? args.session : caller.session;
  if (typeof args.task_id === "string") {
    const row = d
      .prepare("SELECT version, status, owner, claim_session, lease_expires_at FROM tasks WHERE id = ?")
      .get<{
        version: number;
        status: string;
        owner: string | null;
        claim_session: string | null;
        lease_expires_at: string | null;
      }>(args.task_id);
    if (row) {
      Object.assign(pre, { version: row.version, status: row.status, owner: row.owner });
      pre.leased = row.claim_session !== null || row.lease_expires_at !== null;
      pre.leaseMine = leaseState(row, session ?? `agent:${caller.agent}`, now) === "mine";
    }
    pre.workingSessions = d
      .prepare("SELECT COUNT(*) AS n FROM active_work WHERE task_id = ? AND stopped_at IS NULL")
      .get<{ n: number }>(args.task_id)!.n;
  }
  pre.activeTask =
    d
      .prepare("SELECT task_id FROM active_work WHERE session_id = ? AND stopped_at IS NULL")
      .get<{ task_id: string }>(session)?.task_id ?? null;
  if (plan.tool === "arbeit_task_start_work" && typeof args.task_id === "string") {
    const session = typeof args.session === "string" ? args.session : caller.session;
    const active = d
      .prepare(
        `SELECT a.task_id FROM active_work a JOIN tasks t ON t.id = a.task_id
         WHERE a.session_id = ? AND a.stopped_at IS NULL AND t.deleted_at IS NULL`,
      )
      .get<{ task_id: string }>(session);
    pre.alreadyWorking = active?.task_id === args.task_id;
    const task = d
      .prepare("SELECT claim_session, lease_expires_at FROM tasks WHERE id = ?")
      .get<{ claim_session: string | null; lease_expires_at: string | null }>(args.task_id);
    const terminal = pre.status === "completed" || pre.status === "cancelled";
    pre.leaseFree =
      task !== undefined && !terminal && leaseState(task, caller.session ?? `agent:${caller.agent}`, now) === "free";
  }
  if (plan.tool === "arbeit_relationship" && typeof args.type === "string") {
    const edge = canonicalEdge(String(args.from_task_id), String(args.to_task_id), args.type);
    const task =
      edge.type === "parent_of" || edge.type === "blocks"
        ? d
            .prepare("SELECT claim_session, lease_expires_at FROM tasks WHERE id = ?")
            .get<{ claim_session: string | null; lease_expires_at: string | null }>(edge.to)
        : undefined;
    pre.reshapesHeld = task !== undefined && leaseState(task, session ?? `agent:${caller.agent}`, now) === "other";
  }
  if (plan.tool === "arbeit_progress_complete" && Array.isArray(args.item_ids)) {
    const ids = [...new Set(args.item_ids.filter((id): id is string => typeof id === "string"))];
    if (ids.length > 0) {
      pre.pendingTasks = d
        .prepare(
          `SELECT COUNT(DISTINCT task_id) AS n FROM progress_items WHERE completed = 0 AND id IN (${ids.map(() => "?").join(",")})`,
        )
        .get<{ n: number }>(...ids)!.n;
    }
  }
  return pre;
}

const repeat = (type: string, n: number) => Array.from({ length: n }, () => type);

/**
 * The events a successful call writes (docs/maintenance.md lists the same rules). Undefined for
 * a tool this harness does not know yet: its failures are still checked to write nothing.
 */
export function expectedEvents(tool: string, args: Record<string, unknown>, data: any, pre: Pre): string[] | undefined {
  switch (tool) {
    case "arbeit_init":
    case "arbeit_task_get":
    case "arbeit_query":
      return [];
    case "arbeit_task_create":
      return ["task_created"];
    case "arbeit_task_update": {
      if (data.task.version <= pre.version) return [];
      // Completing or cancelling ends every session's work on the task and releases its claim.
      const finished = (s: string | null) => s === "completed" || s === "cancelled";
      if (!finished(data.task.status) || finished(pre.status)) return ["task_updated"];
      return [
        "task_updated",
        ...repeat("work_stopped", pre.workingSessions),
        // Setting `owner` in the same call ends the lease with the change (an assignment), before
        // completion could release it: task_updated records that.
        ...(pre.leased && !("owner" in args) ? ["claim_released"] : []),
      ];
    }
    case "arbeit_task_delete":
      return ["task_deleted"];
    case "arbeit_task_start_work":
      return [
        ...repeat("claim_expired", pre.expired),
        // A session still working on the task whose lease ran out claims it again.
        ...(pre.leaseFree ? ["task_claimed"] : []),
        ...(pre.alreadyWorking ? [] : ["work_started"]),
      ];
    case "arbeit_task_stop_work": {
      // Stopping hands back the session's live claim on the task.
      if (pre.activeTask !== args.task_id) return [];
      return ["work_stopped", ...(pre.leaseMine ? ["claim_released"] : [])];
    }
    case "arbeit_context_add":
      return args.supersede_entry_id ? ["context_added", "context_superseded"] : ["context_added"];
    case "arbeit_progress_add":
      return ["progress_added"];
    case "arbeit_progress_complete":
      return repeat("progress_completed", pre.pendingTasks);
    case "arbeit_relationship":
      return args.action === "add" ? ["relationship_added"] : data.removed ? ["relationship_removed"] : [];
    case "arbeit_task_claim": {
      // File reservations (paths) are outside this model: their events, and their leases that run
      // out, are specified by test/service/reservations.test.ts and the multi-agent tests.
      if (args.paths !== undefined) return undefined;
      // A heartbeat (renew naming no task) runs the session's leases again, silently.
      if (args.action === "renew" && args.task_id === undefined && !args.next) return [];
      const swept = repeat("claim_expired", pre.expired);
      if (args.action === "release") return [...swept, ...(data.released ? ["claim_released"] : [])];
      if (args.next) return [...swept, ...(data.claimed ? ["task_claimed"] : [])];
      return [...swept, data.renewed ? "claim_renewed" : "task_claimed"];
    }
    case "arbeit_resume":
      return args.peek ? [] : repeat("claim_expired", pre.expired);
    case "arbeit_memory":
      // A new key in a full scope evicts the weakest entries first; gc writes no event.
      if (args.action === "set") return [...repeat("memory_deleted", data.evicted?.length ?? 0), "memory_set"];
      if (args.action === "delete") return data.deleted ? ["memory_deleted"] : [];
      // A merge deletes every merged entry, then sets the one it keeps; similar only reads.
      if (args.action === "merge") return [...repeat("memory_deleted", data.merged.length), "memory_set"];
      return [];
    default:
      return undefined;
  }
}

function recordRule(stats: Stats, tool: string, args: Record<string, unknown>, written: string[]): void {
  const variant =
    tool === "arbeit_relationship" || tool === "arbeit_memory" || tool === "arbeit_task_claim"
      ? `${tool} ${args.action ?? "claim"}`
      : tool;
  const rules = stats.eventRules.get(variant) ?? new Map<string, number>();
  const key = written.length === 0 ? "(none)" : written.join(" + ");
  rules.set(key, (rules.get(key) ?? 0) + 1);
  stats.eventRules.set(variant, rules);
}

// ---- the model ---------------------------------------------------------------------------------

function applyToModel(world: World, tool: string, args: Record<string, unknown>, data: any, caller: Caller): void {
  const model = world.model;
  switch (tool) {
    case "arbeit_task_create":
      model.addTask(data.task.id, args as any);
      return;
    case "arbeit_task_update":
      model.update(args as any);
      return;
    case "arbeit_task_delete":
      model.tasks.get(args.task_id as string)!.deleted = true;
      return;
    case "arbeit_task_start_work": {
      const task = model.tasks.get(args.task_id as string)!;
      task.status = data.task.status;
      return;
    }
    case "arbeit_context_add":
      model.contexts.set(data.entry.id, { task: args.task_id as string, supersededBy: null });
      if (args.supersede_entry_id) model.contexts.get(args.supersede_entry_id as string)!.supersededBy = data.entry.id;
      return;
    case "arbeit_progress_add":
      for (const item of data.items)
        model.progress.set(item.id, { task: args.task_id as string, completed: item.completed });
      return;
    case "arbeit_progress_complete":
      for (const id of args.item_ids as string[]) model.progress.get(id)!.completed = true;
      return;
    case "arbeit_relationship": {
      const edge = canonicalEdge(args.from_task_id as string, args.to_task_id as string, args.type as string);
      if (args.action === "add") model.addEdge(edge.from, edge.type, edge.to);
      else if (data.removed) model.removeEdge(edge.from, edge.type, edge.to);
      return;
    }
    case "arbeit_batch": {
      // Each operation as if called alone, in order, with "$ref" in an id field read as the id it
      // stood for; a "$word" anywhere else is text.
      const ids = new Map<string, string>();
      const operations = args.operations as Array<{ tool: string; args: Record<string, unknown>; ref?: string }>;
      const resolve = (value: unknown) =>
        typeof value === "string" && value.startsWith("$") && ids.has(value.slice(1)) ? ids.get(value.slice(1)) : value;
      for (const [i, operation] of operations.entries()) {
        const result = data.results[i].data;
        const resolved = Object.fromEntries(
          Object.entries(operation.args).map(([key, value]) =>
            BATCH_ID_FIELDS.has(key) ? [key, Array.isArray(value) ? value.map(resolve) : resolve(value)] : [key, value],
          ),
        );
        applyToModel(world, operation.tool, resolved, result, caller);
        if (operation.ref) ids.set(operation.ref, result.task?.id ?? result.entry?.id);
      }
      return;
    }
    case "arbeit_init":
    case "arbeit_task_get":
    case "arbeit_query":
    case "arbeit_task_stop_work":
    case "arbeit_task_claim":
    case "arbeit_resume":
    case "arbeit_memory":
      return;
    default:
      // A tool this model does not know: take the graph from the database, so later steps stay meaningful.
      syncModel(world);
      void caller;
  }
}

interface DbState {
  tasks: Map<string, { status: string; deleted: boolean; risk: string | null; impact: string | null }>;
  edges: Array<{ from_task_id: string; to_task_id: string; type: string }>;
}

function readDb(driver: SqlDriver): DbState {
  const tasks = new Map(
    driver
      .prepare("SELECT id, status, deleted_at, risk, impact FROM tasks")
      .all<{ id: string; status: string; deleted_at: string | null; risk: string | null; impact: string | null }>()
      .map((row) => [
        row.id,
        { status: row.status, deleted: row.deleted_at !== null, risk: row.risk, impact: row.impact },
      ]),
  );
  const edges = driver
    .prepare("SELECT from_task_id, to_task_id, type FROM relationships WHERE removed_at IS NULL")
    .all<{ from_task_id: string; to_task_id: string; type: string }>();
  return { tasks, edges };
}

function syncModel(world: World): void {
  const { tasks, edges } = readDb(world.driver);
  const fresh = new Model();
  for (const [id, row] of tasks) {
    const old = world.model.tasks.get(id);
    fresh.tasks.set(id, {
      id,
      deleted: row.deleted,
      status: row.status,
      parent: null,
      blockers: new Set(),
      intent: old?.intent ?? null,
      risk: row.risk,
      impact: row.impact,
    });
  }
  for (const edge of edges) fresh.addEdge(edge.from_task_id, edge.type, edge.to_task_id);
  world.model.tasks.clear();
  for (const [id, task] of fresh.tasks) world.model.tasks.set(id, task);
  world.model.otherEdges.clear();
  for (const edge of fresh.otherEdges) world.model.otherEdges.add(edge);
}

function assertModel(world: World, context: () => string): void {
  const { tasks, edges } = readDb(world.driver);
  const model = world.model;
  assert.deepEqual([...tasks.keys()].sort(), [...model.tasks.keys()].sort(), `tasks differ after ${context()}`);
  for (const [id, row] of tasks) {
    const m = model.tasks.get(id)!;
    assert.equal(row.deleted, m.deleted, `${id} deleted flag after ${context()}`);
    assert.equal(row.status, m.status, `${id} status after ${context()}`);
    assert.deepEqual([row.risk, row.impact], [m.risk, m.impact], `${id} risk and impact after ${context()}`);
  }
  const parents = new Map<string, string>();
  const blockers = new Map<string, Set<string>>();
  const others = new Set<string>();
  for (const edge of edges) {
    if (edge.type === "parent_of") parents.set(edge.to_task_id, edge.from_task_id);
    else if (edge.type === "blocks") {
      const set = blockers.get(edge.to_task_id) ?? new Set();
      set.add(edge.from_task_id);
      blockers.set(edge.to_task_id, set);
    } else others.add(`${edge.from_task_id} ${edge.type} ${edge.to_task_id}`);
  }
  for (const [id, m] of model.tasks) {
    assert.equal(parents.get(id) ?? null, m.parent, `${id} parent after ${context()}`);
    assert.deepEqual([...(blockers.get(id) ?? [])].sort(), [...m.blockers].sort(), `${id} blockers after ${context()}`);
  }
  assert.deepEqual([...others].sort(), [...model.otherEdges].sort(), `other relationships after ${context()}`);

  const contexts = world.driver
    .prepare("SELECT id, superseded_by FROM context_entries")
    .all<{ id: string; superseded_by: string | null }>();
  assert.equal(contexts.length, model.contexts.size, `context entries after ${context()}`);
  for (const row of contexts)
    assert.equal(row.superseded_by, model.contexts.get(row.id)?.supersededBy, `${row.id} after ${context()}`);
  const progress = world.driver
    .prepare("SELECT id, completed FROM progress_items")
    .all<{ id: string; completed: number }>();
  assert.equal(progress.length, model.progress.size, `progress items after ${context()}`);
  for (const row of progress)
    assert.equal(Boolean(row.completed), model.progress.get(row.id)?.completed, `${row.id} after ${context()}`);
}

/** The graph invariants, read straight from the database: live tasks, live edges. */
function assertGraph(world: World, context: () => string): void {
  const { tasks, edges } = readDb(world.driver);
  const live = (id: string) => tasks.get(id)?.deleted === false;
  const parentOf = new Map<string, string[]>();
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (!live(edge.from_task_id) || !live(edge.to_task_id)) continue;
    if (edge.type === "parent_of")
      parentOf.set(edge.to_task_id, [...(parentOf.get(edge.to_task_id) ?? []), edge.from_task_id]);
    if (edge.type === "blocks") next.set(edge.from_task_id, [...(next.get(edge.from_task_id) ?? []), edge.to_task_id]);
  }
  for (const [child, parents] of parentOf) {
    assert.equal(parents.length, 1, `${child} has ${parents.length} parents after ${context()}`);
  }
  for (const id of tasks.keys()) {
    if (!live(id)) continue;
    let depth = 1;
    const seen = new Set([id]);
    for (let at = parentOf.get(id)?.[0]; at; at = parentOf.get(at)?.[0]) {
      assert.ok(!seen.has(at), `hierarchy cycle through ${at} after ${context()}`);
      seen.add(at);
      depth++;
    }
    assert.ok(depth <= 4, `${id} sits at depth ${depth} after ${context()}`);
  }
  // A blocks cycle: depth-first search with colours.
  const colour = new Map<string, number>();
  const visit = (id: string): void => {
    colour.set(id, 1);
    for (const to of next.get(id) ?? []) {
      assert.notEqual(colour.get(to), 1, `blocks cycle through ${to} after ${context()}`);
      if (!colour.has(to)) visit(to);
    }
    colour.set(id, 2);
  };
  for (const id of next.keys()) if (!colour.has(id)) visit(id);
}

async function assertHistory(world: World): Promise<void> {
  const db = new SqliteDb(world.driver);
  const findings = await historyFindings(db);
  assert.deepEqual(findings, [], `the event log no longer explains the rows at step ${world.step}`);
  // What the tools write, `arbeit import` and doctor accept: the row rules are the tools' rules.
  assert.deepEqual(await ruleFindings(db), [], `a row the tools wrote breaks the row rules at step ${world.step}`);
}
