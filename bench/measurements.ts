import { INCLUDE_SECTIONS } from "../src/service/briefing.js";
import type { Caller } from "../src/service/caller.js";
import { QUERY_NAMES } from "../src/service/queries.js";
import type { Envelope } from "../src/tools/envelope.js";
import type { Harness } from "./harness.js";
import type { Manifest } from "./seed.js";
import type { Rng } from "./stats.js";

/**
 * The latency measurements, one entry each: what to call, how often, and the target its p50 is
 * held to. A measurement whose tool or query does not exist yet is skipped,
 * so entries for features still being built can sit here ahead of them.
 */

export interface MeasureContext {
  h: Harness;
  m: Manifest;
  rng: Rng;
}

export interface Call {
  tool: string;
  args: unknown;
  caller?: Partial<Caller>;
  /** The error code the call must fail with; success is required when absent. */
  expectError?: string;
}

export interface LatencySpec {
  name: string;
  label: string;
  /** Milliseconds; met when p50 is at or under it. */
  targetMs?: number;
  iterations: number;
  warmup: number;
  /** "after-claims" runs once the claim-throughput processes have claimed the best tasks. */
  phase?: "after-claims";
  /** Tools and arbeit_query names that must exist for this measurement to run. */
  requires?: { tools?: string[]; queries?: string[] };
  /** Untimed, before each call (e.g. writes that give the call something to report). */
  before?(ctx: MeasureContext, i: number): Promise<void>;
  call(ctx: MeasureContext, i: number): Call;
  /** Untimed, after each call (e.g. undoing what it added). */
  after?(ctx: MeasureContext, i: number, envelope: Envelope): Promise<void>;
}

const RESUME_AGENTS = ["claude-1", "claude-2", "opencode-1", "opencode-2", "codex-1", "planner"];

function graphQuery(name: "critical_path" | "parallel_groups" | "bottlenecks", label: string): LatencySpec {
  return {
    name: `query_${name}`,
    label,
    iterations: 30,
    warmup: 3,
    requires: { queries: [name] },
    targetMs: 50,
    call: () => ({ tool: "arbeit_query", args: { query: name } }),
  };
}

export const LATENCY: LatencySpec[] = [
  {
    name: "task_create",
    label: "create: subtask (parent_id, description, priority)",
    targetMs: 0.5,
    iterations: 2000,
    warmup: 100,
    call: ({ m, rng }, i) => ({
      tool: "arbeit_task_create",
      args: {
        title: `Bench subtask ${i}`,
        description: "Created by the benchmark to time task creation under a feature.",
        parent_id: rng.pick(m.features),
        priority: i % 5,
      },
    }),
  },
  {
    name: "task_create_root",
    label: "create: root task, title only",
    targetMs: 0.5,
    iterations: 1000,
    warmup: 50,
    call: (_ctx, i) => ({ tool: "arbeit_task_create", args: { title: `Bench root task ${i}` } }),
  },
  {
    name: "task_update",
    label: "update: description of an open task",
    targetMs: 1,
    iterations: 2000,
    warmup: 100,
    call: ({ m, rng }, i) => ({
      tool: "arbeit_task_update",
      args: { task_id: rng.pick(m.openLeaves), description: `Revised by the benchmark, round ${i}.` },
    }),
  },
  {
    name: "task_get_briefing",
    label: `get with full briefing (all ${INCLUDE_SECTIONS.length} include sections)`,
    targetMs: 2,
    iterations: 2000,
    warmup: 100,
    call: ({ m, rng }) => ({
      tool: "arbeit_task_get",
      args: { task_id: rng.pick(m.richLeaves), include: [...INCLUDE_SECTIONS] },
    }),
  },
  {
    name: "query_ready",
    label: "ready, top 20",
    targetMs: 10,
    iterations: 1000,
    warmup: 50,
    call: () => ({ tool: "arbeit_query", args: { query: "ready", params: { limit: 20 } } }),
  },
  {
    name: "query_descendants_of",
    label: "descendants_of an epic (65 descendants, 3 levels)",
    iterations: 1000,
    warmup: 50,
    call: ({ m, rng }) => ({
      tool: "arbeit_query",
      args: { query: "descendants_of", params: { task_id: rng.pick(m.epics) } },
    }),
  },
  {
    name: "cycle_reject",
    label: "cycle check: last -> first of the blocks chain (CIRCULAR_DEPENDENCY)",
    targetMs: 10,
    iterations: 300,
    warmup: 10,
    call: ({ m }) => ({
      tool: "arbeit_relationship",
      args: { action: "add", from_task_id: m.chain.at(-1), to_task_id: m.chain[0], type: "blocks" },
      expectError: "CIRCULAR_DEPENDENCY",
    }),
  },
  {
    name: "cycle_accept",
    label: "cycle check: new blocker of the chain's head (walks the whole chain, accepted)",
    targetMs: 10,
    iterations: 300,
    warmup: 10,
    call: ({ m }) => ({
      tool: "arbeit_relationship",
      args: { action: "add", from_task_id: m.outsider, to_task_id: m.chain[0], type: "blocks" },
    }),
    after: async ({ h, m }) => {
      const undo = await h.call("arbeit_relationship", {
        action: "remove",
        from_task_id: m.outsider,
        to_task_id: m.chain[0],
        type: "blocks",
      });
      if (!undo.success) throw new Error(`removing the bench edge failed: ${JSON.stringify(undo.error)}`);
    },
  },
  {
    name: "resume_peek",
    label: "arbeit_resume, peek, for an agent with months of history",
    iterations: 300,
    warmup: 10,
    targetMs: 5,
    requires: { tools: ["arbeit_resume"] },
    call: (_ctx, i) => ({
      tool: "arbeit_resume",
      args: { peek: true },
      caller: { agent: RESUME_AGENTS[i % RESUME_AGENTS.length]!, session: `ses-resume-${i % RESUME_AGENTS.length}` },
    }),
  },
  {
    name: "resume_after_changes",
    label: "arbeit_resume after 3 new events (cursor advances)",
    iterations: 300,
    warmup: 10,
    targetMs: 5,
    requires: { tools: ["arbeit_resume", "arbeit_context_add"] },
    before: async ({ h, m, rng }) => {
      for (let k = 0; k < 3; k++) {
        const added = await h.call(
          "arbeit_context_add",
          { task_id: rng.pick(m.richLeaves), type: "note", content: "A change for a resuming agent to hear about." },
          { agent: "bench-teammate" },
        );
        if (!added.success) throw new Error(`context_add failed: ${JSON.stringify(added.error)}`);
      }
    },
    call: () => ({
      tool: "arbeit_resume",
      args: {},
      caller: { agent: "bench-resumer", session: "ses-bench-resumer" },
    }),
  },
  {
    name: "query_ready_claimed",
    label: "ready, top 20, while the claim run's 1,200 best tasks are claimed",
    targetMs: 10,
    iterations: 1000,
    warmup: 50,
    phase: "after-claims",
    requires: { tools: ["arbeit_task_claim"] },
    call: () => ({ tool: "arbeit_query", args: { query: "ready", params: { limit: 20 } } }),
  },
  graphQuery("critical_path", "critical_path over the whole store"),
  graphQuery("parallel_groups", "parallel_groups over the whole store"),
  graphQuery("bottlenecks", "bottlenecks over the whole store"),
];

/** Why a measurement cannot run on this checkout, or undefined when it can. */
export function missingRequirement(spec: LatencySpec, h: Harness): string | undefined {
  for (const tool of spec.requires?.tools ?? []) if (!h.hasTool(tool)) return `no tool ${tool}`;
  const queries = new Set<string>(QUERY_NAMES);
  for (const query of spec.requires?.queries ?? []) if (!queries.has(query)) return `no query ${query}`;
  return undefined;
}
