import { expectEnvelope } from "./harness.js";
import type { LatencySpec, MeasureContext } from "./measurements.js";
import type { ResultRow } from "./results.js";
import { summarize } from "./stats.js";

/** Runs one latency measurement: warm-up calls first, then timed calls, each checked. */
export async function runLatency(spec: LatencySpec, ctx: MeasureContext, scale: number): Promise<ResultRow> {
  const warmup = Math.max(2, Math.round(spec.warmup * scale));
  const iterations = Math.max(5, Math.round(spec.iterations * scale));
  const samples: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    await spec.before?.(ctx, i);
    const call = spec.call(ctx, i);
    const start = process.hrtime.bigint();
    const envelope = await ctx.h.call(call.tool, call.args, call.caller);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    expectEnvelope(envelope, `${spec.name} #${i}`, call.expectError);
    await spec.after?.(ctx, i, envelope);
    if (i >= warmup) samples.push(ms);
  }
  return latencyRow(spec.name, spec.label, samples, spec.targetMs);
}

/** A latency row from timed samples (ms), against an optional target in ms. */
export function latencyRow(name: string, label: string, samples: number[], target?: number): ResultRow {
  const s = summarize(samples);
  return {
    name,
    label,
    kind: "latency",
    iterations: s.iterations,
    p50: s.p50,
    p99: s.p99,
    mean: s.mean,
    max: s.max,
    ...(target === undefined ? {} : { target: `<= ${target} ms` }),
    met: target === undefined ? null : s.p50 <= target,
    metP99: target === undefined ? null : s.p99 <= target,
  };
}
