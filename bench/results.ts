/** One line of the results table, whatever kind of measurement produced it. */
export interface ResultRow {
  name: string;
  label: string;
  kind: "latency" | "throughput" | "cpu-ratio" | "info" | "tokens";
  iterations?: number;
  p50?: number;
  p99?: number;
  mean?: number;
  max?: number;
  /** For throughput and ratios: the headline value, in `unit`. */
  value?: number;
  unit?: string;
  /** Human-readable target, e.g. "<= 0.5 ms". */
  target?: string;
  /** Whether the target is met (p50 for latencies); null when there is no target. */
  met: boolean | null;
  /** For latencies with a target: whether p99 is within it too. */
  metP99?: boolean | null;
  note?: string;
  skipped?: string;
}
