import { type ChildProcessByStdio, spawn } from "node:child_process";

/** Issue 4: claims from 8 processes at once, aggregate. */
const CLAIMS_TARGET = 1000;

import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { bareClaimRate } from "./claim-floor.js";
import { postgresOf } from "./harness.js";
import type { ResultRow } from "./results.js";
import { summarize } from "./stats.js";

/**
 * Claim throughput: `workers` processes claim the best ready task (arbeit_task_claim next: true)
 * against one store at once, as agents would. Every process is started and warm before the
 * clock starts; the result is claims per second from "go" to the last process done, plus the
 * per-claim latency over all processes. A task claimed twice is a failure, not a number.
 */

const WORKER = fileURLToPath(new URL("./claim-worker.ts", import.meta.url));

interface WorkerReport {
  agent: string;
  claimed: string[];
  latencies: number[];
  empty: number;
  errors: string[];
}

type Worker = ChildProcessByStdio<Writable, Readable, null>;

function lineReader(child: Worker): () => Promise<string> {
  let buffer = "";
  const waiting: Array<(line: string) => void> = [];
  const lines: string[] = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    }
  });
  return () => {
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve, reject) => {
      waiting.push(resolve);
      child.once("exit", (code) => reject(new Error(`claim worker exited with ${code}`)));
    });
  };
}

/** Runs `workers` claiming processes at once; every claim's latency, the ids and the wall time. */
async function claimRound(
  dbPath: string,
  projectDir: string,
  workers: number,
  claimsPerWorker: number,
  prefix: string,
): Promise<{ reports: WorkerReport[]; seconds: number }> {
  const children = Array.from({ length: workers }, (_, i) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", WORKER, dbPath, projectDir, `${prefix}-${i + 1}`, String(claimsPerWorker)],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    return { child, next: lineReader(child) };
  });
  for (const { next } of children) {
    const line = await next();
    if (line !== "ready") throw new Error(`claim worker said ${line}`);
  }
  const start = process.hrtime.bigint();
  for (const { child } of children) child.stdin.end("go\n");
  const reports = await Promise.all(children.map(async ({ next }) => JSON.parse(await next()) as WorkerReport));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { reports, seconds };
}

/**
 * The measurement, then its floor: one process alone claiming (no lock to wait for, no one to
 * hand it to), whose time per claim is what one claim transaction costs; 8 processes can go no
 * faster than one claim per that time where writers run one at a time (SQLite).
 */
export async function runClaimThroughput(
  dbPath: string,
  projectDir: string,
  options: { workers: number; claimsPerWorker: number },
): Promise<ResultRow> {
  const { reports, seconds } = await claimRound(
    dbPath,
    projectDir,
    options.workers,
    options.claimsPerWorker,
    "bench-claimer",
  );
  const alone = await claimRound(dbPath, projectDir, 1, options.claimsPerWorker, "bench-alone");
  const aloneLatency = summarize(alone.reports.flatMap((report) => report.latencies));
  const aloneRate = alone.reports[0]!.claimed.length / alone.seconds;

  const ids = reports.flatMap((report) => report.claimed);
  const every = [...ids, ...alone.reports.flatMap((report) => report.claimed)];
  const unique = new Set(every);
  if (unique.size !== every.length) throw new Error(`${every.length - unique.size} task(s) were claimed twice.`);
  const errors = [...reports, ...alone.reports].flatMap((report) => report.errors);
  if (errors.length > 0) throw new Error(`claims failed: ${[...new Set(errors)].join(", ")}`);
  const latency = summarize(reports.flatMap((report) => report.latencies));
  // On Postgres, what the same processes reach with a claim that is one bare statement: the
  // machine's ceiling for any claim (bench/claim-floor.ts).
  let floor = "";
  const postgres = postgresOf(dbPath);
  if (postgres) {
    const bare = await bareClaimRate(postgres.url, postgres.schema, options.workers, options.claimsPerWorker);
    floor = `; a bare one-statement claim from ${options.workers} processes: ${bare.rate.toFixed(0)} claims/s (client CPU ${bare.clientCpuMs.toFixed(2)} ms a claim)`;
  }
  return {
    name: "claim_throughput",
    label: `claim next ready task, ${options.workers} processes at once`,
    kind: "throughput",
    iterations: ids.length,
    p50: latency.p50,
    p99: latency.p99,
    mean: latency.mean,
    max: latency.max,
    value: ids.length / seconds,
    unit: "claims/s",
    target: `>= ${CLAIMS_TARGET} claims/s`,
    met: ids.length / seconds >= CLAIMS_TARGET,
    note:
      `${ids.length} claims in ${seconds.toFixed(2)} s, none twice; ${reports.reduce((n, r) => n + r.empty, 0)} found nothing ready; ` +
      `one process alone: ${aloneRate.toFixed(0)} claims/s, p50 ${aloneLatency.p50.toFixed(2)} ms per claim${floor}`,
  };
}
