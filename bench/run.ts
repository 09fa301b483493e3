/**
 * `npm run bench`: builds (or reuses) a store of 100,000 tasks and about a million events, then
 * times the calls agents make most, the cycle check on a 5,000-long blocks chain, claims from
 * eight processes at once, one CLI call's CPU beside `node -e 0`, and (when Postgres answers)
 * each call's round trips to Postgres. Prints a markdown table
 * and writes bench/.data/results.json and results.md. Never part of the tests: machines are
 * noisy, so nothing here fails on a missed target.
 *
 *   npm run bench                      # full run
 *   npm run bench -- --scale 0.1       # fewer iterations, for a quick look
 *   npm run bench -- --only query_ready,task_create --no-cli
 *   npm run bench -- --dashboard       # the dashboard in Chromium (bench/dashboard.ts)
 *   npm run bench -- --network         # round trips, a delayed network, arbeit serve (bench/network.ts)
 *   npm run bench -- --away            # the edit check when the service cannot be asked (bench/service-away.ts)
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { measureToolTokens } from "../scripts/tool-tokens.js";
import { exportStore } from "../src/maintenance/export.js";
import { importStore } from "../src/maintenance/import.js";
import { findTool } from "../src/tools/catalogue.js";
import { measureAnswerSizes, READY_50_TOKEN_BUDGET } from "./answer-sizes.js";
import { type BenchArgs, parseArgs } from "./args.js";
import { runClaimThroughput } from "./claims.js";
import { type CliCommand, cliCpuAvailable, cliRows, measureCliCpu } from "./cli-cpu.js";
import { type Dataset, prepareDataset } from "./dataset.js";
import { openBenchStore, openHarness, postgresLocation } from "./harness.js";
import { HUB_ROWS } from "./hub.js";
import { runLatency } from "./latency.js";
import { finishMachineInfo, machineInfo } from "./machine.js";
import { LATENCY, type LatencySpec, missingRequirement } from "./measurements.js";
import { renderMarkdown } from "./report.js";
import type { ResultRow } from "./results.js";
import { fmtMs, Rng } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DATA_DIR = join(ROOT, "bench", ".data");
const CLI = join(ROOT, "dist", "cli", "main.js");
const SEED = 20_260_101;
const CLAIM_WORKERS = 8;
const CLI_TARGET_RATIO = 1.5;

const log = (line: string) => process.stderr.write(`${line}\n`);

function describe(row: ResultRow): string {
  if (row.skipped) return `  ${row.name}: skipped (${row.skipped})`;
  const target = row.target ? `  target ${row.target}: ${row.met ? "met" : "MISSED"}` : "";
  if (row.kind === "latency") return `  ${row.name}: p50 ${fmtMs(row.p50!)} ms, p99 ${fmtMs(row.p99!)} ms${target}`;
  return `  ${row.name}: ${row.value?.toFixed(2)} ${row.unit}${target}; ${row.note ?? ""}`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), DATA_DIR);
  if (args.dashboard) {
    const { runDashboardBench } = await import("./dashboard.js");
    const given = process.argv.includes("--tasks");
    return runDashboardBench({
      tasks: given ? args.tasks : 10_000,
      renders: Math.max(3, Math.round(5 * args.scale)),
      changes: Math.max(10, Math.round(40 * args.scale)),
      pages: 20,
      outDir: args.outDir,
    });
  }
  if (args.away) {
    const { printAwayRows, runServiceAwayBench } = await import("./service-away.js");
    const rows = await runServiceAwayBench(Math.max(5, Math.round(20 * args.scale)));
    for (const row of rows) log(describe(row));
    process.stdout.write(printAwayRows(rows));
    return;
  }
  if (args.network) {
    const { runNetworkBench } = await import("./network.js");
    return runNetworkBench({
      scale: args.scale,
      outDir: args.outDir,
      delays: [0, 10, 40],
      agents: 50,
      seconds: Math.max(3, Math.round(10 * Math.min(1, args.scale))),
    });
  }
  const wanted = (name: string) => args.only === undefined || args.only.includes(name);
  const hub = async () => {
    const { measureHub } = await import("./hub.js");
    const rounds = Math.max(3, Math.round(5 * args.scale));
    return (await measureHub({ engine: args.engine, dependants: 200_000, rounds, log })).filter((row) =>
      wanted(row.name),
    );
  };
  // The hub rows build a store of their own: asked for alone, they need no dataset.
  if (args.only?.every((name) => HUB_ROWS.includes(name))) {
    for (const row of await hub()) log(describe(row));
    return;
  }
  const info = machineInfo();
  log(`Machine: ${info.cpu}, ${info.cores} cores, Node ${info.node}, SQLite ${info.sqlite}`);
  log(`Load average at start: ${info.loadAverageStart.join(" ")} (a shared machine makes every figure noisy)`);

  const dataset = await prepareDataset(
    DATA_DIR,
    { tasks: args.tasks, chain: args.chain, seed: SEED },
    {
      fresh: args.fresh,
      log,
    },
  );
  if (args.engine === "postgres") info.store = await loadIntoPostgres(dataset);
  const { manifest } = dataset;
  const seedRate = manifest.serviceCalls / manifest.seedSeconds;
  const seedNote =
    `seeded through the service in ${manifest.serviceCalls.toLocaleString("en-US")} calls ` +
    `(${manifest.seedSeconds.toFixed(0)} s, ${seedRate.toFixed(0)} calls/s, batched transactions` +
    `${dataset.built ? "" : "; timed when the cached copy was built"}).`;
  log(`Dataset: ${JSON.stringify(manifest.counts)}; ${seedNote}`);

  const rows: ResultRow[] = [];
  const record = (row: ResultRow) => {
    rows.push(row);
    log(describe(row));
  };
  // Order matters: the CLI runs on the store as the latency phase left it, before the claim
  // run takes 1,200 of the best tasks; the last phase then times `ready` around those claims.
  await latencyPhase(undefined, dataset, args, wanted, record);
  // The CLI's start-up is the same whatever the store; it is measured on SQLite.
  if (!args.noCli && args.engine === "sqlite" && wanted("cli")) measureCli(dataset, args, record);
  if (!args.noCli && wanted("mcp_start"))
    (await (await import("./mcp-start.js")).measureMcpStart(Math.max(5, Math.round(15 * args.scale)))).forEach(record);
  if (wanted("claim_throughput")) await measureClaims(dataset, args, record);
  await latencyPhase("after-claims", dataset, args, wanted, record);
  // Last: the reservations it seeds stay in the working copy.
  if (wanted("reserve_file") || wanted("check_edit")) {
    const { measureReservations } = await import("./reservations.js");
    const rows = await measureReservations(dataset.working, dataset.projectDir, {
      live: 10_000,
      iterations: Math.max(50, Math.round(500 * args.scale)),
    });
    rows.filter((row) => wanted(row.name)).forEach(record);
  }
  if (HUB_ROWS.some(wanted)) (await hub()).forEach(record);
  if (wanted("answer_sizes")) await measureSizes(record);
  // Round trips to Postgres per call and hook (a fresh project of its own; bench/network.ts).
  if (!args.noCli && wanted("round_trips")) (await (await import("./network.js")).roundTripRows()).forEach(record);

  const finished = finishMachineInfo(info);
  mkdirSync(args.outDir, { recursive: true });
  const markdown = renderMarkdown(finished, manifest, rows, seedNote);
  writeFileSync(
    join(args.outDir, "results.json"),
    `${JSON.stringify({ machine: finished, params: manifest.params, counts: manifest.counts, seedNote, rows }, null, 2)}\n`,
  );
  writeFileSync(join(args.outDir, "results.md"), markdown);
  process.stdout.write(`\n${markdown}`);
  log(`\nWrote ${join(args.outDir, "results.json")} and results.md.`);
}

async function latencyPhase(
  phase: LatencySpec["phase"],
  dataset: Dataset,
  args: BenchArgs,
  wanted: (name: string) => boolean,
  record: (row: ResultRow) => void,
): Promise<void> {
  const specs = LATENCY.filter((spec) => spec.phase === phase && wanted(spec.name));
  if (specs.length === 0) return;
  const h = await openHarness(dataset.working, dataset.projectDir);
  try {
    const ctx = { h, m: dataset.manifest, rng: new Rng(SEED + (phase ? 2 : 1)) };
    for (const spec of specs) {
      const missing = missingRequirement(spec, h);
      record(
        missing
          ? {
              name: spec.name,
              label: spec.label,
              kind: "latency",
              met: null,
              skipped: missing,
              ...(spec.targetMs ? { target: `<= ${spec.targetMs} ms` } : {}),
            }
          : await runLatency(spec, ctx, args.scale),
      );
    }
  } finally {
    await h.close();
  }
}

/** Tokens of the answers agents read most, and of the tool list they are sent every turn. */
async function measureSizes(record: (row: ResultRow) => void): Promise<void> {
  const sizes = await measureAnswerSizes();
  const tools = await measureToolTokens();
  const row = (name: string, label: string, value: number, target?: number, note?: string): ResultRow => ({
    name,
    label,
    kind: "tokens",
    value,
    unit: "tokens",
    met: target === undefined ? null : value <= target,
    ...(target === undefined ? {} : { target: `<= ${target}` }),
    ...(note ? { note } : {}),
  });
  const shape = "50 ready tasks of about six words, most typed, a fifth under epics, two claimed";
  record(row("tokens_ready_50", "`ready`, 50 tasks (JSON envelope)", sizes.ready_50, READY_50_TOKEN_BUDGET, shape));
  record(row("tokens_tasks_50", "`tasks`, 50 tasks (JSON envelope)", sizes.tasks_50));
  record(
    row("tokens_task_get", "`arbeit_task_get`, one task in full", sizes.task_get_full, undefined, "text fields filled"),
  );
  record(row("tokens_tool_list", "tools/list, all tools", tools.total, 2650, "target under 3000; 2650 leaves room"));
}

async function measureClaims(dataset: Dataset, args: BenchArgs, record: (row: ResultRow) => void): Promise<void> {
  if (!findTool("arbeit_task_claim")) {
    record({ name: "claim_throughput", label: "claims", kind: "throughput", met: null, skipped: "no tool" });
    return;
  }
  record(
    await runClaimThroughput(dataset.working, dataset.projectDir, {
      workers: CLAIM_WORKERS,
      claimsPerWorker: Math.max(10, Math.round(150 * args.scale)),
    }),
  );
}

function measureCli(dataset: Dataset, args: BenchArgs, record: (row: ResultRow) => void): void {
  const unavailable = cliCpuAvailable();
  if (unavailable) {
    log(`CLI CPU comparison skipped: ${unavailable}.`);
    return;
  }
  log("Building dist/ for the CLI measurement (npm run build)...");
  const build = spawnSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  if (build.status !== 0) log("The build reported errors; measuring whatever dist/ holds.");
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: the build produced no CLI.`);
  const check = spawnSync(process.execPath, [CLI, "query", "ready", "--limit", "20", "--db", dataset.working], {
    encoding: "utf8",
  });
  const envelope = JSON.parse(check.stdout) as { success: boolean; data?: { tasks: unknown[] } };
  if (!envelope.success || envelope.data?.tasks.length !== 20) {
    throw new Error(`The CLI did not answer ready with 20 tasks: ${check.stdout.slice(0, 300)} ${check.stderr}`);
  }
  const node = process.execPath;
  const briefing = { task_id: dataset.manifest.richLeaves[0], include: ["context", "progress_summary"] };
  const commands: CliCommand[] = [
    { name: "node_e0", label: "`node -e 0` (baseline)", argv: [node, "-e", "0"] },
    {
      name: "query_ready",
      label: "`arbeit query ready --limit 20 --db <store>`",
      argv: [node, CLI, "query", "ready", "--limit", "20", "--db", dataset.working],
    },
    {
      name: "call_task_get",
      label: "`arbeit call arbeit_task_get '{task_id, include: [context, progress_summary]}'`",
      argv: [node, CLI, "call", "arbeit_task_get", JSON.stringify(briefing), "--db", dataset.working],
    },
    {
      name: "task_get",
      label: "`arbeit task get <id> --json` (a friendly command: flags from the tool's schema)",
      argv: [node, CLI, "task", "get", dataset.manifest.richLeaves[0]!, "--json", "--db", dataset.working],
    },
    {
      name: "status",
      label: "`arbeit status --json` (exit 1 when something needs attention)",
      argv: [node, CLI, "status", "--json", "--db", dataset.working],
      exitCodes: [0, 1],
    },
    { name: "help", label: "`arbeit --help` (every command's usage line)", argv: [node, CLI, "--help"] },
    { name: "version", label: "`arbeit --version` (start-up only)", argv: [node, CLI, "--version"] },
    hookCommand(dataset, node),
  ];
  const rounds = Math.max(3, Math.round(10 * Math.min(1, args.scale * 2)));
  log(`CLI CPU: ${rounds} interleaved rounds of 10 calls per command...`);
  const result = measureCliCpu(commands, { rounds, callsPerRound: 10 });
  const headlines = ["query_ready", "call_task_get", "task_get", "status", "help", "hook_post_tool_use"];
  for (const row of cliRows(result, commands, "node_e0", headlines, CLI_TARGET_RATIO)) record(row);
}

/**
 * Claude Code's PostToolUse hook as it runs after every file tool: a session works on a task, and
 * each call records (or finds recorded) a file touch and renews the session's lease on the task.
 */
function hookCommand(dataset: Dataset, node: string): CliCommand {
  const session = "bench-hook-session";
  const task = dataset.manifest.richLeaves[1];
  const started = spawnSync(
    node,
    [
      CLI,
      "call",
      "arbeit_task_start_work",
      JSON.stringify({ task_id: task }),
      "--session",
      session,
      "--db",
      dataset.working,
    ],
    { encoding: "utf8" },
  );
  if (!JSON.parse(started.stdout || "{}").success) throw new Error(`start_work for the hook failed: ${started.stdout}`);
  const payload = {
    session_id: session,
    cwd: dataset.projectDir,
    hook_event_name: "PostToolUse",
    tool_name: "Edit",
    tool_input: { file_path: join(dataset.projectDir, "src", "hooked.ts"), old_string: "a", new_string: "b" },
    tool_response: { success: true },
    tool_use_id: "toolu_bench",
  };
  return {
    name: "hook_post_tool_use",
    label: "`arbeit hook post-tool-use --db <store>` (Edit of a file; renews the lease)",
    argv: [node, CLI, "hook", "post-tool-use", "--db", dataset.working],
    input: JSON.stringify(payload),
  };
}

/**
 * The same dataset in Postgres: the cached SQLite copy exported and imported into a fresh schema
 * (the real export/import code), which then stands in for the working copy. The schema is
 * recreated every run, so no run's writes leak into the next.
 */
async function loadIntoPostgres(dataset: Dataset): Promise<string> {
  const url = process.env.ARBEIT_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = "arbeit_bench";
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  const version = (await admin.query("SHOW server_version")).rows[0].server_version as string;
  await admin.end();
  const started = Date.now();
  const source = await openBenchStore(dataset.working);
  const file = join(DATA_DIR, "postgres-load.jsonl");
  const fd = openSync(file, "w", 0o600);
  try {
    await exportStore(source, (chunk) => void writeSync(fd, chunk));
  } finally {
    closeSync(fd);
    await source.close();
  }
  const target = await openBenchStore(postgresLocation(url, schema));
  try {
    // The same dataset on both engines, claims and work in progress included: a move, not a share.
    await importStore(target, createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY }), {
      keepClaims: true,
    });
  } finally {
    await target.close();
    rmSync(file, { force: true });
  }
  // What autovacuum does within a minute or two of a bulk load, done before measuring: without
  // the visibility map a count reads the table instead of an index (30 ms instead of 3 at
  // 100,000 tasks), so figures taken straight after the import would depend on autovacuum's timing.
  const vacuum = new pg.Client({ connectionString: url });
  await vacuum.connect();
  try {
    const tables = await vacuum.query("SELECT tablename FROM pg_tables WHERE schemaname = $1", [schema]);
    for (const { tablename } of tables.rows) await vacuum.query(`VACUUM (ANALYZE) "${schema}"."${tablename}"`);
  } finally {
    await vacuum.end();
  }
  log(
    `Loaded the dataset into Postgres schema ${schema} at ${url.replace(/:[^:@/]*@/, ":***@")} in ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  );
  dataset.working = postgresLocation(url, schema);
  return `Postgres ${version} at ${new URL(url).host}, schema ${schema} (loaded by arbeit import)`;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
