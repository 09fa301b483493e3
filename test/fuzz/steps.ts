import fc from "fast-check";
import { type Step, TOOL_NAMES } from "./harness.js";

/**
 * How often each tool is called, relative to 2 for a tool not named here (a new tool is fuzzed
 * as soon as it is in the catalogue). Creating leads and deleting trails, so the graph grows.
 */
const WEIGHTS: Record<string, number> = {
  arbeit_init: 0.2,
  arbeit_task_create: 8,
  arbeit_task_update: 4,
  arbeit_task_delete: 1,
  arbeit_relationship: 4,
  arbeit_context_add: 3,
};

/** A fuzz step: a call of any catalogue tool, of one of five kinds, or time passing. */
export function stepArbitrary(): fc.Arbitrary<Step> {
  const tool = fc.oneof(
    ...TOOL_NAMES.map((name) => ({ weight: Math.round((WEIGHTS[name] ?? 2) * 10), arbitrary: fc.constant(name) })),
  );
  const call = fc.record({
    kind: fc.constant("call" as const),
    tool,
    mode: fc.oneof(
      { weight: 11, arbitrary: fc.constant("plausible" as const) },
      { weight: 4, arbitrary: fc.constant("aimed" as const) },
      { weight: 3, arbitrary: fc.constant("schema" as const) },
      { weight: 1, arbitrary: fc.constant("garbage" as const) },
      { weight: 1, arbitrary: fc.constant("replay" as const) },
    ),
    seed: fc.integer(),
    agent: fc.nat(2),
    session: fc.nat(2),
  });
  const tick = fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 1_000, max: 2 * 3600_000 }) });
  return fc.oneof({ weight: 20, arbitrary: call }, { weight: 1, arbitrary: tick });
}
