/** Command-line options of `npm run bench -- [options]`. */

export interface BenchArgs {
  /** Rebuild the dataset even if a cached copy matches. */
  fresh: boolean;
  /** Tasks in the dataset (default 100,000). */
  tasks: number;
  /** Length of the blocks chain used for the cycle checks (default 5,000). */
  chain: number;
  /** Multiplies every measurement's iteration count (e.g. 0.1 for a quick look). */
  scale: number;
  /** Run only the measurements whose names are listed. */
  only: string[] | undefined;
  /** Skip the CLI start-up comparison. */
  noCli: boolean;
  /** Where results.json and the markdown table go. */
  outDir: string;
  /** The store measured: the SQLite file, or the same dataset loaded into Postgres. */
  engine: "sqlite" | "postgres";
  /** Measure the dashboard (in Chromium) instead of the store. */
  dashboard: boolean;
  /** Measure the network instead: round trips, delays, arbeit serve (bench/network.ts). */
  network: boolean;
  /** Measure the edit check in a checkout whose service cannot be asked (bench/service-away.ts). */
  away: boolean;
}

const USAGE = `Usage: npm run bench -- [--fresh] [--tasks N] [--chain N] [--scale F] [--only a,b] [--no-cli]
                       [--engine sqlite|postgres] [--dashboard] [--network] [--away]

  --fresh      rebuild the dataset instead of reusing bench/.data/<key>.db
  --tasks N    tasks in the dataset (default 100000)
  --chain N    length of the blocks chain for the cycle checks (default 5000)
  --scale F    multiply iteration counts by F (default 1)
  --only a,b   run only these measurements (names as in the results table)
  --no-cli     skip what starts CLI processes: the CPU comparison, the MCP start, round trips
  --engine E   sqlite (default) or postgres: the same dataset imported into a Postgres schema
               (ARBEIT_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
  --dashboard  measure the dashboard instead: page weight, first render at 10,000 tasks (--tasks),
               change-to-screen latency, server memory with 20 pages (needs Chromium)
  --network    measure the network instead (needs Postgres, ARBEIT_BENCH_DATABASE_URL): round
               trips per call and hook, a CLI call and a hook at 0/10/40 ms round trip on Postgres
               and through arbeit serve, the service's overhead, 50 agents at 10 calls/s
  --away       measure the PreToolUse edit check in a checkout whose service cannot be asked:
               stopped, behind a hung network, first try and with the outage known
`;

export function parseArgs(argv: readonly string[], defaultOutDir: string): BenchArgs {
  const args: BenchArgs = {
    fresh: false,
    tasks: 100_000,
    chain: 5_000,
    scale: 1,
    only: undefined,
    noCli: false,
    outDir: defaultOutDir,
    engine: "sqlite",
    dashboard: false,
    network: false,
    away: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value.\n${USAGE}`);
      return next;
    };
    const positive = (text: string): number => {
      const n = Number(text);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag} needs a positive number, not ${text}.`);
      return n;
    };
    if (flag === "--fresh") args.fresh = true;
    else if (flag === "--no-cli") args.noCli = true;
    else if (flag === "--dashboard") args.dashboard = true;
    else if (flag === "--network") args.network = true;
    else if (flag === "--away") args.away = true;
    else if (flag === "--tasks") args.tasks = Math.round(positive(value()));
    else if (flag === "--chain") args.chain = Math.round(positive(value()));
    else if (flag === "--scale") args.scale = positive(value());
    else if (flag === "--only") args.only = value().split(",").filter(Boolean);
    else if (flag === "--out") args.outDir = value();
    else if (flag === "--engine") {
      const engine = value();
      if (engine !== "sqlite" && engine !== "postgres") throw new Error(`--engine is sqlite or postgres.\n${USAGE}`);
      args.engine = engine;
    } else if (flag === "--help" || flag === "-h") {
      process.stdout.write(USAGE);
      process.exit(0);
    } else throw new Error(`Unknown option ${flag}.\n${USAGE}`);
  }
  if (args.dashboard || args.network) return args;
  if (args.chain + 100 > args.tasks) throw new Error("--tasks must exceed --chain by at least 100.");
  return args;
}
