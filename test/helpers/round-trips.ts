import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { hookPayload } from "../claude/hook-input.js";
import { type CliResult, runCli } from "./cli.js";
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from "./postgres.js";
import type { RoundTripCounts, TcpProxy } from "./tcp-proxy.js";
import { tempDir } from "./temp.js";

/**
 * The calls whose network cost is budgeted (test/store/round-trips.test.ts) and measured
 * (`npm run bench -- --network`): each one a fresh process of the built CLI, as an agent's shell
 * command or a Claude Code hook runs, talking to Postgres through a counting proxy.
 */

/** The same Postgres URL, with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(proxy.port);
  return proxied.href;
}

/** Where a URL's server listens: the proxy's target. */
export function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}

export interface Counted {
  counts: RoundTripCounts;
  result: CliResult;
  /** Wall time of the whole process, spawn to exit, in ms. */
  ms: number;
}

/** Runs `run` (one fresh process talking through `proxy`) and counts what crossed the proxy. */
export async function counted(proxy: TcpProxy, run: () => Promise<CliResult>): Promise<Counted> {
  proxy.reset();
  const start = performance.now();
  const result = await run();
  const ms = performance.now() - start;
  return { counts: proxy.counts(), result, ms };
}

/** A bare Postgres connection through the proxy, opened and closed: what connecting costs. */
export async function bareConnect(proxy: TcpProxy, url = TEST_DATABASE_URL): Promise<RoundTripCounts> {
  proxy.reset();
  const client = new pg.Client({ connectionString: throughProxy(url, proxy) });
  await client.connect();
  await client.end();
  return proxy.counts();
}

/**
 * Each call's round-trip budget, held by test/store/round-trips.test.ts; docs/postgres.md shows
 * the same table (the test compares them). A budget counts round trips once connected: the call's
 * total minus what a bare connection costs (the TCP handshake and the startup exchange, 2 without
 * TLS). A call that opens a second connection pays that one's cost inside its budget. The budgets
 * are today's counts, so a regression fails; the goal is one round trip per call, two where a call
 * must read before it writes. Lower a budget whenever a change lowers a count.
 */
/**
 * The network delay round trips are counted at, in the budget test and the bench. Without a delay
 * a pipelined burst can be answered piece by piece before the client has sent all of it, and one
 * round trip would count as several.
 */
export const COUNTING_DELAY_MS = 20;

export const ROUND_TRIP_BUDGETS: Record<string, { budget: number; goal: number }> = {
  task_get: { budget: 1, goal: 1 },
  task_create: { budget: 1, goal: 1 },
  task_create_subtask: { budget: 2, goal: 2 },
  task_update: { budget: 2, goal: 2 },
  context_add: { budget: 2, goal: 2 },
  ready: { budget: 1, goal: 1 },
  claim_next: { budget: 2, goal: 2 },
  resume: { budget: 2, goal: 2 },
  hook_post_tool_use: { budget: 2, goal: 2 },
  hook_user_prompt_submit: { budget: 2, goal: 2 },
  hook_session_start: { budget: 2, goal: 2 },
};

export const HOOK_SESSION = "claude-round-trips";

/** One budgeted call: the CLI's arguments (and a hook's stdin). */
export interface NetworkCall {
  name: string;
  label: string;
  args: string[];
  input?: string;
  /** A hook exits 0 with whatever it prints; a tool command must print a successful envelope. */
  hook?: boolean;
}

/**
 * A project on Postgres (a schema of its own) with a little work in it: a task under way in a
 * Claude Code session (so the hooks record, renew and brief as they do mid-session), a second
 * task with context, and open tasks to claim.
 */
export interface NetworkProject {
  dir: string;
  schema: string;
  /** The environment of a process that talks to Postgres directly. */
  env: Record<string, string>;
  /** The environment of a process that talks to Postgres through `proxy`. */
  proxiedEnv(proxy: TcpProxy): Record<string, string>;
  /** Runs the CLI in the project, on Postgres directly; fails unless it succeeds. Answers the data. */
  cli(args: string[], input?: string): Promise<any>;
  working: string;
  other: string;
  /** Every budgeted call, in the order they run (later ones see earlier ones' writes). */
  calls: NetworkCall[];
  close(): Promise<void>;
}

export async function networkProject(url = TEST_DATABASE_URL): Promise<NetworkProject> {
  const { dir, cleanup } = tempDir("arbeit-net-");
  const schema = uniqueSchema("arbeit_net");
  const env = { ARBEIT_DATABASE_URL: url, ARBEIT_DATABASE_SCHEMA: schema };
  const cli = async (args: string[], input?: string) => {
    const result = await runCli([...args, "--json"], { cwd: dir, env, ...(input === undefined ? {} : { input }) });
    if (result.code !== 0) throw new Error(`arbeit ${args.join(" ")} failed: ${result.stdout}${result.stderr}`);
    return result.json.data;
  };
  await cli(["init"]);
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "app.ts"), "export {};\n");
  const working = (await cli(["task", "create", "Fix the login timeout"])).task.id as string;
  const other = (await cli(["task", "create", "Document the API"])).task.id as string;
  for (let i = 0; i < 8; i++) await cli(["task", "create", `Open task ${i + 1}`]);
  const claude = ["--session", HOOK_SESSION, "--agent", "claude-code"];
  await cli(["task", "start-work", working, ...claude]);
  await cli(["context", "add", working, "decision", "Keep the session cookie", ...claude]);
  await cli(["progress", "add", working, "Reproduce", "Fix", ...claude]);
  await cli(["context", "add", other, "note", "The API has 14 endpoints"]);
  const hook = (event: string, fields: Record<string, unknown>) => hookPayload(dir, HOOK_SESSION, event, fields);
  const calls: NetworkCall[] = [
    { name: "task_get", label: "`arbeit task get`", args: ["task", "get", other] },
    { name: "task_create", label: "`arbeit task create`", args: ["task", "create", "Counted"] },
    {
      name: "task_create_subtask",
      label: "`arbeit task create --parent-id`",
      args: ["task", "create", "Counted subtask", "--parent-id", other],
    },
    { name: "task_update", label: "`arbeit task update`", args: ["task", "update", other, "--priority", "1"] },
    { name: "context_add", label: "`arbeit context add`", args: ["context", "add", other, "note", "Counted note"] },
    { name: "ready", label: "`arbeit query ready`", args: ["query", "ready"] },
    { name: "claim_next", label: "`arbeit task claim --next`", args: ["task", "claim", "--next"] },
    { name: "resume", label: "`arbeit resume`", args: ["resume", ...claude] },
    {
      name: "hook_post_tool_use",
      label: "PostToolUse hook (an Edit)",
      args: ["hook", "post-tool-use"],
      input: hook("PostToolUse", {
        tool_name: "Edit",
        tool_input: { file_path: join(dir, "src", "app.ts"), old_string: "a", new_string: "b" },
        tool_response: { success: true },
        tool_use_id: "toolu_round_trips",
      }),
      hook: true,
    },
    {
      name: "hook_user_prompt_submit",
      label: "UserPromptSubmit hook",
      args: ["hook", "user-prompt-submit"],
      input: hook("UserPromptSubmit", { prompt: "Carry on with the login fix" }),
      hook: true,
    },
    {
      name: "hook_session_start",
      label: "SessionStart hook",
      args: ["hook", "session-start"],
      input: hook("SessionStart", { source: "resume" }),
      hook: true,
    },
  ];
  return {
    dir,
    schema,
    env,
    proxiedEnv: (proxy) => ({ ...env, ARBEIT_DATABASE_URL: throughProxy(url, proxy) }),
    cli,
    working,
    other,
    calls,
    async close() {
      await dropSchema(schema);
      cleanup();
    },
  };
}

/** Runs one budgeted call in a fresh process with `env`; throws unless it did its job. */
export async function runNetworkCall(dir: string, call: NetworkCall, env: Record<string, string>): Promise<CliResult> {
  const args = call.hook ? call.args : [...call.args, "--json"];
  // A hook runs in the environment Claude Code gives it: no CLAUDE_PROJECT_DIR of the outer shell.
  const result = await runCli(args, {
    cwd: dir,
    env: call.hook ? { CLAUDE_PROJECT_DIR: "", ...env } : env,
    ...(call.input === undefined ? {} : { input: call.input }),
  });
  const ok = call.hook ? result.code === 0 && result.stderr === "" : result.code === 0 && result.json?.success;
  if (!ok) throw new Error(`${call.label} failed (${result.code}): ${result.stdout}${result.stderr}`);
  return result;
}
