/**
 * `npm run bench -- --network`: what the network costs a call, and what `arbeit serve` costs.
 *
 * 1. Round trips to Postgres per tool call and per hook, one fresh process each, counted through
 *    a proxy (test/helpers/tcp-proxy.ts), beside each call's budget and goal.
 * 2. Side by side, interleaved: `arbeit task get` and the PostToolUse hook, (a) on Postgres
 *    through a proxy that adds a fixed round-trip time, (b) through `arbeit serve` (on the same
 *    Postgres, directly) behind the same kind of proxy, at 0, 10 and 40 ms: wall time of the
 *    whole process, p50/p95, and the round trips it made on the delayed link.
 * 3. The service's overhead over an in-process call: the same tool call through invokeTool in
 *    this process, and as POST /api/call to the service on loopback, alternately.
 * 4. 50 agents, each with its own agent token, each making 10 calls a second (mixed reads and
 *    writes) for about 10 s against the service: latency p50/p99.
 *
 * 3 and 4 run with the service on Postgres and on a SQLite file. Needs Postgres
 * (ARBEIT_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { hookPayload, runHook } from "../test/claude/hook-input.js";
import { type CliResult, runCli } from "../test/helpers/cli.js";
import {
  bareConnect,
  COUNTING_DELAY_MS,
  counted,
  type NetworkCall,
  type NetworkProject,
  networkProject,
  ROUND_TRIP_BUDGETS,
  runNetworkCall,
  targetOf,
} from "../test/helpers/round-trips.js";
import { type RoundTripCounts, startTcpProxy, type TcpProxy } from "../test/helpers/tcp-proxy.js";
import { tempDir } from "../test/helpers/temp.js";
import { type Checkout, checkout } from "../test/remote/harness.js";
import { makeToken, RELEASE, type Service, startService } from "../test/serve/harness.js";
import type { UiProject } from "../test/ui/harness.js";
import { expectEnvelope, openHarness, postgresLocation } from "./harness.js";
import { finishMachineInfo, type MachineInfo, machineInfo } from "./machine.js";
import { machineLines } from "./report.js";
import type { ResultRow } from "./results.js";
import { fmtMs, percentile, Rng } from "./stats.js";

const log = (line: string) => process.stderr.write(`${line}\n`);

export interface NetworkBenchOptions {
  scale: number;
  outDir: string;
  /** Added round-trip times, ms. */
  delays: number[];
  /** Concurrent agents, and how long they run (s). */
  agents: number;
  seconds: number;
}

interface CountRow {
  name: string;
  label: string;
  connections: number;
  roundTrips: number;
  afterConnect: number;
  budget: number;
  goal: number;
}

interface WallRow {
  call: string;
  path: "postgres" | "service";
  rttMs: number;
  n: number;
  p50: number;
  p95: number;
  /** Round trips on the delayed link, per call (the last call's; they do not vary). */
  roundTrips: number;
  note?: string;
}

interface OverheadRow {
  engine: string;
  tool: string;
  n: number;
  inProcess: { p50: number; p99: number };
  http: { p50: number; p99: number };
}

interface AgentsRow {
  engine: string;
  agents: number;
  perAgentRate: number;
  seconds: number;
  calls: number;
  errors: number;
  achievedRate: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU the service process used during the run, as a share of one core (Linux; else NaN). */
  serviceCpu: number;
  /** CPU the load generator (this process) used, as a share of one core. */
  clientCpu: number;
  mix: string;
}

interface Target {
  project: UiProject;
  service: Service;
  /** POST /api/call with `token`: the envelope. */
  call(token: string, tool: string, args: unknown): Promise<any>;
  /** A client with a connection of its own. */
  client(): (token: string, tool: string, args: unknown) => Promise<any>;
  location: string;
  close(): Promise<void>;
}

/**
 * The per-token rate limit raised out of the way: the overhead loop sends calls back to back,
 * far over the default 50 a second. (Each load agent's 10 a second is under the default anyway.)
 */
const UNLIMITED = ["--rate", "100000", "--burst", "100000"];

/** A process's user + system CPU so far, in seconds, from /proc (Linux's 100 Hz ticks). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

export async function runNetworkBench(options: NetworkBenchOptions): Promise<void> {
  const url = process.env.ARBEIT_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  process.env.ARBEIT_TEST_DATABASE_URL ??= url;
  const info = machineInfo();
  log(`Machine: ${info.cpu}, ${info.cores} cores, Node ${info.node}; load ${info.loadAverageStart.join(" ")}`);
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const version = (await admin.query("SHOW server_version")).rows[0].server_version as string;
  await admin.end();
  info.store = `Postgres ${version} at ${new URL(url).host} (a fresh schema per run, a few tasks)`;

  const pgProxy = await startTcpProxy({ target: targetOf(url, 5432), roundTripMs: COUNTING_DELAY_MS });
  const httpProxy = await startTcpProxy();
  const project = await networkProject(url);
  let service: Service | undefined;
  let laptop: Checkout | undefined;
  try {
    const counts = await countRoundTrips(project, pgProxy, url);
    pgProxy.roundTripMs = 0;
    const served = await serviceRoundTrips(project, url);
    service = await startService(project, ["--allow-host", `127.0.0.1:${httpProxy.port}`, ...UNLIMITED]);
    httpProxy.target = targetOf(service.url, 80);
    laptop = await laptopCheckout(project, httpProxy);
    const wall = await wallTimes(project, laptop, pgProxy, httpProxy, options);
    const overhead: OverheadRow[] = [];
    const agents: AgentsRow[] = [];
    const targets: Array<[string, () => Promise<Target>]> = [
      ["Postgres", async () => serviceTarget(project, service!, postgresLocation(url, project.schema))],
      ["SQLite", sqliteTarget],
    ];
    for (const [engine, open] of targets) {
      const target = await open();
      try {
        overhead.push(await serviceOverhead(engine, target, options.scale));
        agents.push(await concurrentAgents(engine, target, options));
      } finally {
        await target.close();
      }
    }
    const finished = finishMachineInfo(info);
    const markdown = renderNetwork(finished, counts, served, wall, overhead, agents);
    mkdirSync(options.outDir, { recursive: true });
    writeFileSync(
      join(options.outDir, "network.json"),
      `${JSON.stringify({ machine: finished, counts, served, wall, overhead, agents }, null, 2)}\n`,
    );
    writeFileSync(join(options.outDir, "network.md"), markdown);
    process.stdout.write(`\n${markdown}`);
    log(`\nWrote ${join(options.outDir, "network.json")} and network.md.`);
  } finally {
    laptop?.close();
    await service?.stop();
    await httpProxy.close();
    await pgProxy.close();
    await project.close();
  }
}

/**
 * The round-trip counts alone, as rows of the full run's table (a few seconds): each budgeted
 * call's round trips to Postgres once connected, against its goal. One row saying why when
 * Postgres does not answer.
 */
export async function roundTripRows(): Promise<ResultRow[]> {
  const url = process.env.ARBEIT_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  process.env.ARBEIT_TEST_DATABASE_URL ??= url;
  const { default: pg } = await import("pg");
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  probe.on("error", () => {});
  try {
    await probe.connect();
  } catch (error) {
    const why = `Postgres does not answer at ${new URL(url).host}: ${error instanceof Error ? error.message : error}`;
    return [{ name: "round_trips", label: "Postgres round trips per call", kind: "info", met: null, note: why }];
  } finally {
    await probe.end().catch(() => {});
  }
  const proxy = await startTcpProxy({ target: targetOf(url, 5432), roundTripMs: COUNTING_DELAY_MS });
  const project = await networkProject(url);
  try {
    const rows = await countRoundTrips(project, proxy, url);
    return rows
      .filter((row) => row.name !== "connect")
      .map((row) => ({
        name: `round_trips_${row.name}`,
        label: `Postgres round trips once connected: ${row.label}`,
        kind: "info",
        value: row.afterConnect,
        unit: "round trips",
        target: `<= ${row.goal}`,
        met: row.afterConnect <= row.goal,
        note: `${row.roundTrips} with the connection, one fresh process; budget ${row.budget} (test/store/round-trips.test.ts)`,
      }));
  } finally {
    await project.close();
    await proxy.close();
  }
}

/** Each budgeted call once, in order, on a fresh project: the same counts the test holds. */
async function countRoundTrips(project: NetworkProject, proxy: TcpProxy, url: string): Promise<CountRow[]> {
  const bare = await bareConnect(proxy, url);
  log(`A bare Postgres connection: ${bare.roundTrips} round trips (handshake + startup).`);
  const rows: CountRow[] = [
    {
      name: "connect",
      label: "a bare connection (TCP handshake + startup)",
      connections: bare.connections,
      roundTrips: bare.roundTrips,
      afterConnect: 0,
      budget: 0,
      goal: 0,
    },
  ];
  for (const call of project.calls) {
    const { counts } = await counted(proxy, () => runNetworkCall(project.dir, call, project.proxiedEnv(proxy)));
    const { budget, goal } = ROUND_TRIP_BUDGETS[call.name]!;
    rows.push({
      name: call.name,
      label: call.label,
      connections: counts.connections,
      roundTrips: counts.roundTrips,
      afterConnect: counts.roundTrips - bare.roundTrips,
      budget,
      goal,
    });
    log(`  ${call.name}: ${counts.roundTrips} round trips (${counts.roundTrips - bare.roundTrips} once connected)`);
  }
  return rows;
}

interface ServiceCountRow {
  name: string;
  tool: string;
  /** Round trips the service made to Postgres for one POST /api/call, its pool warm. */
  roundTrips: number;
  connections: number;
}

/**
 * The service's own round trips to Postgres per call: a service of its own behind a counting
 * proxy (never delayed), each call made once to warm the pool and the prepared statements, then
 * counted.
 */
async function serviceRoundTrips(project: NetworkProject, url: string): Promise<ServiceCountRow[]> {
  const proxy = await startTcpProxy({ target: targetOf(url, 5432), roundTripMs: COUNTING_DELAY_MS });
  const service = await startService({ ...project, env: project.proxiedEnv(proxy) }, UNLIMITED);
  try {
    const token = await makeToken(project, ["--agent", "counted-through-serve"]);
    const call = apiClient(service.url);
    const calls: Array<[string, string, unknown]> = [
      ["task_get", "arbeit_task_get", { task_id: project.other }],
      ["task_create", "arbeit_task_create", { title: "Through the service" }],
      ["task_update", "arbeit_task_update", { task_id: project.other, priority: 2 }],
      ["context_add", "arbeit_context_add", { task_id: project.other, type: "note", content: "Served" }],
      ["ready", "arbeit_query", { query: "ready" }],
      ["resume", "arbeit_resume", {}],
    ];
    // The PostToolUse hook of an Edit, as a checkout pointed at the service sends it (POST /api/hook).
    const hook = apiClient(service.url, "/api/hook");
    const edit = (n: number) => ({
      hook: "post-tool-use",
      session: "claude-counted",
      input: { touch: { path: `src/counted-${n}.ts`, operation: "write" } },
    });
    const rows: ServiceCountRow[] = [];
    const count = async (name: string, label: string, send: (n: number) => Promise<any>) => {
      const warm = await send(1);
      if (!warm.success) throw new Error(`${label} through the service: ${JSON.stringify(warm).slice(0, 300)}`);
      // The service also talks to Postgres on its own (its webhook deliverer looks for work twice
      // a second), which only adds: the fewest of three runs is the call's own count. Each run
      // starts once what the last one set going without waiting (a read's COMMIT) has ended.
      let fewest: { exchanges: number; connections: number } | undefined;
      for (let run = 2; run <= 4; run++) {
        await new Promise((resolve) => setTimeout(resolve, 5 * COUNTING_DELAY_MS));
        proxy.reset();
        const again = await send(run);
        if (!again.success) throw new Error(`${label} through the service: ${JSON.stringify(again).slice(0, 300)}`);
        const counts = proxy.counts();
        if (fewest === undefined || counts.exchanges < fewest.exchanges) fewest = counts;
      }
      const counts = fewest!;
      rows.push({ name, tool: label, roundTrips: counts.exchanges, connections: counts.connections });
      log(`  through arbeit serve, ${label}: ${counts.exchanges} round trips to Postgres`);
    };
    for (const [name, tool, args] of calls)
      await count(name, `\`${tool}\``, (n) =>
        call(token, tool, name === "task_update" ? { ...(args as object), priority: n } : args),
      );
    // A session has to be taken before the hook records in it: the first request does that.
    await count("hook_post_tool_use", "POST /api/hook `post-tool-use` (an Edit)", (n) => hook(token, edit(n)));
    return rows;
  } finally {
    await service.stop();
    await proxy.close();
  }
}

/** A second checkout pointed at the service through `proxy`, signed in with an agent token. */
async function laptopCheckout(project: NetworkProject, proxy: TcpProxy): Promise<Checkout> {
  const token = await makeToken(project, ["--agent", "laptop-agent"]);
  const laptop = checkout();
  const url = `http://127.0.0.1:${proxy.port}`;
  const init = await laptop.cli(["init", "--server", url, "--json"]);
  if (init.code !== 0) throw new Error(`init --server failed: ${init.stdout}${init.stderr}`);
  const login = await laptop.cli(["login", url, "--token-stdin", "--json"], { input: `${token}\n` });
  if (login.code !== 0) throw new Error(`login failed: ${login.stdout}${login.stderr}`);
  return laptop;
}

interface WallConfig {
  call: string;
  path: WallRow["path"];
  rttMs: number;
  proxy: TcpProxy;
  run(): Promise<CliResult>;
  samples: number[];
  last?: RoundTripCounts;
}

async function wallTimes(
  project: NetworkProject,
  laptop: Checkout,
  pgProxy: TcpProxy,
  httpProxy: TcpProxy,
  options: NetworkBenchOptions,
): Promise<WallRow[]> {
  const call = (name: string): NetworkCall => project.calls.find((c) => c.name === name)!;
  const env = project.proxiedEnv(pgProxy);
  const remoteHook = hookPayload(laptop.dir, "claude-laptop", "PostToolUse", {
    tool_name: "Edit",
    tool_input: { file_path: join(laptop.dir, "src", "app.ts"), old_string: "a", new_string: "b" },
    tool_response: { success: true },
    tool_use_id: "toolu_bench",
  });
  const succeeded = (result: CliResult, what: string) => {
    if (result.code !== 0 || !result.json?.success) throw new Error(`${what}: ${result.stdout}${result.stderr}`);
    return result;
  };
  const configs: WallConfig[] = [];
  for (const rttMs of options.delays) {
    const add = (name: string, path: WallRow["path"], proxy: TcpProxy, run: () => Promise<CliResult>) =>
      configs.push({ call: name, path, rttMs, proxy, run, samples: [] });
    add("`arbeit task get`", "postgres", pgProxy, () => runNetworkCall(project.dir, call("task_get"), env));
    add("`arbeit task get`", "service", httpProxy, async () =>
      succeeded(await laptop.cli(["task", "get", project.other, "--json"]), "remote task get"),
    );
    add("PostToolUse hook", "postgres", pgProxy, () => runNetworkCall(project.dir, call("hook_post_tool_use"), env));
    add("PostToolUse hook", "service", httpProxy, () =>
      runHook("post-tool-use", remoteHook, laptop.dir, { XDG_CONFIG_HOME: laptop.config }),
    );
  }
  const rounds = Math.max(5, Math.round(20 * options.scale));
  log(`Wall time: ${rounds} interleaved rounds of ${configs.length} fresh processes...`);
  // One warm-up round (the page cache, Postgres's plans), then every config once per round.
  for (let round = 0; round <= rounds; round++) {
    for (const config of configs) {
      config.proxy.roundTripMs = config.rttMs;
      const { counts, ms } = await counted(config.proxy, config.run);
      config.proxy.roundTripMs = 0;
      if (round > 0) config.samples.push(ms);
      config.last = counts;
    }
  }
  return configs.map((config) => {
    const s = sorted(config.samples);
    const silent = config.last!.roundTrips === 0;
    return {
      call: config.call,
      path: config.path,
      rttMs: config.rttMs,
      n: s.length,
      p50: percentile(s, 50),
      p95: percentile(s, 95),
      roundTrips: config.last!.roundTrips,
      ...(silent ? { note: "sent nothing" } : {}),
    };
  });
}

/**
 * POST /api/call (or `path`) over node:http with a keep-alive agent of its own (one connection, as
 * one agent client holds), lighter on the client's CPU than fetch: the load generator shares the
 * machine. The call's body is `{tool, args}`; with another path, the body given.
 */
export function apiClient(url: string, path?: "/api/hook"): (token: string, ...body: any[]) => Promise<any> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { hostname, port } = new URL(url);
  return (token, ...parts) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(path ? parts[0] : { tool: parts[0], args: parts[1] });
      const req = request(
        {
          host: hostname,
          port,
          path: path ?? "/api/call",
          method: "POST",
          agent,
          headers: {
            "Content-Type": "application/json",
            "Content-Length": Buffer.byteLength(body),
            Authorization: `Bearer ${token}`,
            // As Arbeit's own clients: the service serves a hook step only to a client that names its release.
            "Arbeit-Version": RELEASE,
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => {
            try {
              resolve(JSON.parse(text));
            } catch (error) {
              reject(error);
            }
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}

export function serviceTarget(project: UiProject, service: Service, location: string, close = async () => {}): Target {
  const shared = apiClient(service.url);
  return {
    project,
    service,
    location,
    call: shared,
    client: () => apiClient(service.url),
    close,
  };
}

/** A SQLite project with its own service, for the service's own costs without Postgres's. */
async function sqliteTarget(): Promise<Target> {
  const { dir, cleanup } = tempDir("arbeit-net-sqlite-");
  const init = await runCli(["init", "--json"], { cwd: dir });
  if (init.code !== 0) throw new Error(`init failed: ${init.stdout}${init.stderr}`);
  const project: UiProject = { dir, env: {}, cli: async () => undefined, close: async () => {} };
  const service = await startService(project, UNLIMITED);
  return serviceTarget(project, service, join(dir, ".arbeit", "arbeit.db"), async () => {
    await service.stop();
    cleanup();
  });
}

/** The same arbeit_task_get, in process and through the service on loopback, alternately. */
export async function serviceOverhead(engine: string, target: Target, scale: number): Promise<OverheadRow> {
  const token = await makeToken(target.project, ["--agent", "overhead"]);
  const harness = await openHarness(target.location, target.project.dir);
  try {
    const created = await harness.call("arbeit_task_create", { title: "Measured", description: "The overhead" });
    if (!created.success) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
    const args = { task_id: (created.data as { task: { id: string } }).task.id };
    const n = Math.max(100, Math.round(2000 * scale));
    const warmup = Math.max(20, Math.round(n / 20));
    const inProcess: number[] = [];
    const http: number[] = [];
    log(`Service overhead on ${engine}: ${n} calls each way, alternately...`);
    for (let i = 0; i < warmup + n; i++) {
      let start = performance.now();
      expectEnvelope(await harness.call("arbeit_task_get", args), "in-process get");
      const local = performance.now() - start;
      start = performance.now();
      const remote = await target.call(token, "arbeit_task_get", args);
      const over = performance.now() - start;
      if (!remote.success) throw new Error(`POST /api/call failed: ${JSON.stringify(remote).slice(0, 300)}`);
      if (i >= warmup) {
        inProcess.push(local);
        http.push(over);
      }
    }
    const a = sorted(inProcess);
    const b = sorted(http);
    return {
      engine,
      tool: "arbeit_task_get",
      n,
      inProcess: { p50: percentile(a, 50), p99: percentile(a, 99) },
      http: { p50: percentile(b, 50), p99: percentile(b, 99) },
    };
  } finally {
    await harness.close();
  }
}

/**
 * `agents` agents, each with its own agent token and task, each sending a call every
 * 1000/rate ms on a fixed schedule (open loop: a slow answer does not delay the next call), for
 * `seconds`. Latency runs from the scheduled send, so a client that falls behind shows as latency.
 */
export async function concurrentAgents(
  engine: string,
  target: Target,
  options: NetworkBenchOptions,
): Promise<AgentsRow> {
  const rate = 10;
  const seconds = options.seconds;
  log(`${options.agents} agents on ${engine}: making tokens...`);
  const tokens: string[] = [];
  for (let i = 0; i < options.agents; i++)
    tokens.push(await makeToken(target.project, ["--agent", `load-${String(i).padStart(2, "0")}`]));
  const tasks: string[] = [];
  for (const token of tokens) {
    const made = await target.call(token, "arbeit_task_create", { title: "An agent's own task" });
    if (!made.success) throw new Error(`create failed: ${JSON.stringify(made)}`);
    tasks.push(made.data.task.id);
  }
  // Seven reads to three writes, as an agent at work: its task, what is ready, notes and steps.
  const mix: Array<(agent: number, i: number) => [string, unknown]> = [
    (a) => ["arbeit_task_get", { task_id: tasks[a] }],
    (a) => ["arbeit_task_get", { task_id: tasks[a], include: ["context", "progress_summary"] }],
    () => ["arbeit_query", { query: "ready", params: { limit: 10 } }],
    (a) => ["arbeit_task_get", { task_id: tasks[(a + 1) % tasks.length] }],
    (a, i) => ["arbeit_context_add", { task_id: tasks[a], type: "note", content: `Note ${i}` }],
    () => ["arbeit_query", { query: "tasks", params: { limit: 10 } }],
    (a, i) => ["arbeit_task_update", { task_id: tasks[a], priority: i % 4 }],
    (a) => ["arbeit_task_get", { task_id: tasks[a] }],
    (a, i) => ["arbeit_progress_add", { task_id: tasks[a], items: [`Step ${i}`] }],
    () => ["arbeit_resume", {}],
  ];
  const latencies: number[] = [];
  /** Each call's tool, when it was due (ms from the start) and how long it took: the slowest are logged. */
  const calls: Array<{ tool: string; at: number; ms: number }> = [];
  let errors = 0;
  const firstErrors: string[] = [];
  const rng = new Rng(7);
  const interval = 1000 / rate;
  const perAgent = Math.round(seconds * rate);
  log(`  ${options.agents} agents x ${rate} calls/s for ${seconds} s (${options.agents * perAgent} calls)...`);
  const clients = tokens.map(() => target.client());
  // A service at work, not its first seconds: every agent's connection open, the service's pool at
  // its size, and each pooled connection having prepared the mix's statements (on Postgres a
  // connection parses and plans each statement the first time it runs it, which made the whole
  // p99 of a 10 s run fall in its first 2 s). Each agent runs the mix once before the clock starts.
  await Promise.all(
    clients.map(async (client, a) => {
      for (let i = 0; i < mix.length; i++) {
        const [tool, args] = mix[(a + i) % mix.length]!(a, i);
        await client(tokens[a]!, tool, args);
      }
    }),
  );
  const start = performance.now() + 200;
  const cpuBefore = cpuSeconds(target.service.child.pid);
  const ownBefore = process.cpuUsage();
  const agent = async (a: number) => {
    // Agents start spread over the first interval, not in lock step.
    const offset = rng.next() * interval;
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < perAgent; i++) {
      const due = start + offset + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const [tool, args] = mix[(a + i) % mix.length]!(a, i);
      inFlight.push(
        clients[a]!(tokens[a]!, tool, args).then(
          (envelope) => {
            latencies.push(performance.now() - due);
            calls.push({ tool, at: due - start, ms: performance.now() - due });
            if (!envelope.success) {
              errors++;
              if (firstErrors.length < 3) firstErrors.push(`${tool}: ${JSON.stringify(envelope.error).slice(0, 200)}`);
            }
          },
          (error: unknown) => {
            latencies.push(performance.now() - due);
            errors++;
            if (firstErrors.length < 3) firstErrors.push(`${tool}: ${String(error)}`);
          },
        ),
      );
    }
    await Promise.all(inFlight);
  };
  await Promise.all(tokens.map((_, a) => agent(a)));
  const elapsed = (performance.now() - start) / 1000;
  const serviceCpu = (cpuSeconds(target.service.child.pid) - cpuBefore) / elapsed;
  const own = process.cpuUsage(ownBefore);
  const clientCpu = (own.user + own.system) / 1e6 / elapsed;
  if (firstErrors.length > 0) log(`  errors: ${firstErrors.join("; ")}`);
  // Where the tail comes from: the slowest 1%, by tool and by second of the run.
  const slowest = [...calls].sort((x, y) => y.ms - x.ms).slice(0, Math.max(1, Math.round(calls.length / 100)));
  const tally = (key: (call: (typeof calls)[number]) => string) => {
    const counts = new Map<string, number>();
    for (const call of slowest) counts.set(key(call), (counts.get(key(call)) ?? 0) + 1);
    return [...counts].map(([k, n]) => `${k} x${n}`).join(", ");
  };
  log(`  slowest 1%: ${tally((call) => call.tool)}; by second: ${tally((call) => `${Math.floor(call.at / 1000)}s`)}`);
  const s = sorted(latencies);
  const row: AgentsRow = {
    engine,
    agents: options.agents,
    perAgentRate: rate,
    seconds,
    calls: s.length,
    errors,
    achievedRate: s.length / elapsed,
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    max: s.at(-1) ?? Number.NaN,
    serviceCpu,
    clientCpu,
    mix: "get x4 (one with a briefing), ready, tasks, resume, context add, update, progress add",
  };
  log(
    `  p50 ${fmtMs(row.p50)} ms, p99 ${fmtMs(row.p99)} ms, ${errors} errors, ${row.achievedRate.toFixed(0)} calls/s, service CPU ${(serviceCpu * 100).toFixed(0)}%, load generator ${(clientCpu * 100).toFixed(0)}%`,
  );
  return row;
}

const yes = (met: boolean) => (met ? "yes" : "**no**");

export function renderNetwork(
  info: MachineInfo,
  counts: CountRow[],
  served: ServiceCountRow[],
  wall: WallRow[],
  overhead: OverheadRow[],
  agents: AgentsRow[],
): string {
  const lines: string[] = ["### Machine", "", machineLines(info), ""];
  lines.push(
    "### Round trips to Postgres per call (one fresh process each)",
    "",
    "| call | connections | round trips | once connected | budget | goal | goal met |",
    "|---|---:|---:|---:|---:|---:|---|",
  );
  for (const row of counts) {
    if (row.name === "connect") {
      lines.push(`| ${row.label} | ${row.connections} | ${row.roundTrips} | — | — | — | — |`);
      continue;
    }
    lines.push(
      `| ${row.label} | ${row.connections} | ${row.roundTrips} | ${row.afterConnect} | ${row.budget} | ${row.goal} | ${yes(
        row.afterConnect <= row.goal,
      )} |`,
    );
  }
  lines.push(
    "",
    "### Round trips from arbeit serve to Postgres per call (its pool warm)",
    "",
    "| tool | round trips | the same call from a fresh process, once connected | new connections |",
    "|---|---:|---:|---:|",
  );
  for (const row of served) {
    const cli = counts.find((c) => c.name === row.name);
    lines.push(`| ${row.tool} (${row.name}) | ${row.roundTrips} | ${cli?.afterConnect ?? "—"} | ${row.connections} |`);
  }
  lines.push(
    "",
    "### Wall time of a fresh process, by added network round trip",
    "",
    "Postgres: the process talks to Postgres through the delaying proxy. Service: the process sends one",
    "HTTP request to `arbeit serve` through the delaying proxy; the service talks to Postgres directly.",
    "Added: p50 minus the same call's p50 at 0 ms. Round trips: on the delayed link, per call.",
    "",
    "| call | path | round trip | n | p50 ms | p95 ms | added (p50) ms | round trips | notes |",
    "|---|---|---:|---:|---:|---:|---:|---:|---|",
  );
  for (const row of wall) {
    const base = wall.find((r) => r.call === row.call && r.path === row.path && r.rttMs === 0);
    const added = base && row.rttMs > 0 ? fmtMs(row.p50 - base.p50) : "—";
    lines.push(
      `| ${row.call} | ${row.path} | ${row.rttMs} ms | ${row.n} | ${fmtMs(row.p50)} | ${fmtMs(row.p95)} | ${added} | ${row.roundTrips} | ${row.note ?? ""} |`,
    );
  }
  lines.push(
    "",
    "### The service's overhead over an in-process call",
    "",
    "| store | tool | n | in process p50 / p99 ms | POST /api/call p50 / p99 ms | overhead (p50) ms | goal <= 1 ms |",
    "|---|---|---:|---|---|---:|---|",
  );
  for (const row of overhead) {
    const extra = row.http.p50 - row.inProcess.p50;
    lines.push(
      `| ${row.engine} | \`${row.tool}\` | ${row.n} | ${fmtMs(row.inProcess.p50)} / ${fmtMs(row.inProcess.p99)} | ${fmtMs(
        row.http.p50,
      )} / ${fmtMs(row.http.p99)} | ${fmtMs(extra)} | ${yes(extra <= 1)} |`,
    );
  }
  lines.push(
    "",
    "### Concurrent agents against the service",
    "",
    "Latency runs from the moment each call was due, so a service that falls behind shows as latency.",
    "CPU: what the service process and the load generator (the bench process, one keep-alive",
    "connection per agent) used during the run, in % of one core.",
    "",
    "| store | agents x calls/s | s | calls | errors | achieved calls/s | p50 ms | p99 ms | max ms | CPU service / generator | goal p99 < 50 ms |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
  );
  for (const row of agents) {
    lines.push(
      `| ${row.engine} | ${row.agents} x ${row.perAgentRate} | ${row.seconds} | ${row.calls} | ${row.errors} | ${row.achievedRate.toFixed(
        0,
      )} | ${fmtMs(row.p50)} | ${fmtMs(row.p99)} | ${fmtMs(row.max)} | ${(row.serviceCpu * 100).toFixed(0)}% / ${(row.clientCpu * 100).toFixed(0)}% | ${yes(
        row.p99 < 50,
      )} |`,
    );
  }
  if (agents[0]) lines.push("", `Mix per agent, in turn: ${agents[0].mix}.`);
  lines.push("");
  return lines.join("\n");
}
