import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { latencyRow } from "./latency.js";
import type { ResultRow } from "./results.js";
import { fmtMs } from "./stats.js";

/**
 * `npm run bench -- --away`: how long Claude Code's PreToolUse edit check takes, as a whole
 * `arbeit hook pre-tool-use` process, in a checkout whose service cannot be asked (docs/team.md,
 * "When the service cannot be asked"): the service stopped (nothing listens), the first check
 * after a failure, and the checks within the 30 s after it, which do not try the network; and
 * behind a hung network (a listener that accepts and never answers), whose first check waits out
 * the edit check's 0.6 s answer timeout. Fail-open and fail-closed answer alike. The target: within
 * 1 s once the outage is known.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");
const TARGET_MS = 1_000;

function run(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  input = "",
): Promise<{ code: number | null; ms: number; stdout: string }> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.resume();
  child.stdin.end(input);
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ code, ms: Number(process.hrtime.bigint() - start) / 1e6, stdout })),
  );
}

async function freePort(): Promise<number> {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function runServiceAwayBench(iterations: number): Promise<ResultRow[]> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "arbeit-bench-away-")));
  const sockets = new Set<Socket>();
  const hung = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
  try {
    const stopped = `http://127.0.0.1:${await freePort()}`;
    const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const env = {
      ...process.env,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, ".config"),
      ARBEIT_TOKEN: `arb_${"x".repeat(43)}`,
      CLAUDE_PROJECT_DIR: "",
    };
    for (const key of ["ARBEIT_URL", "ARBEIT_DB", "ARBEIT_DATABASE_URL"]) delete (env as NodeJS.ProcessEnv)[key];
    const init = await run(["init", "--server", stopped, "--json"], dir, env);
    if (init.code !== 0) throw new Error("arbeit init --server failed");
    const payload = JSON.stringify({
      session_id: "bench-away",
      cwd: dir,
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: { file_path: join(dir, "src", "app.ts"), old_string: "a", new_string: "b" },
    });
    const state = join(dir, ".arbeit", "service-away.json");
    const check = (extra: NodeJS.ProcessEnv = {}) => run(["hook", "pre-tool-use"], dir, { ...env, ...extra }, payload);
    const rows: ResultRow[] = [];
    const measure = async (name: string, label: string, extra: NodeJS.ProcessEnv, first: boolean) => {
      const samples: number[] = [];
      for (let i = 0; i < iterations; i++) {
        if (first) rmSync(state, { force: true });
        const answer = await check(extra);
        if (answer.code !== 0) throw new Error(`${name}: the hook exited ${answer.code}`);
        samples.push(answer.ms);
      }
      rows.push(latencyRow(name, label, samples, TARGET_MS));
    };
    // For scale on this machine: a Node process that does nothing, started the same way.
    const bare: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint();
      await new Promise((resolve) => spawn(process.execPath, ["-e", "0"], { stdio: "ignore" }).on("close", resolve));
      bare.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    rows.push(latencyRow("away_node_bare", "for scale: `node -e 0`", bare));
    await measure("away_stopped_first", "edit check, service stopped, first after the failure", {}, true);
    await check();
    await measure("away_stopped_known", "edit check, service stopped, outage known (no network)", {}, false);
    await measure(
      "away_hung_first",
      "edit check, hung network, first (waits the 0.6 s timeout)",
      { ARBEIT_URL: hungUrl },
      true,
    );
    await check({ ARBEIT_URL: hungUrl });
    await measure(
      "away_hung_known",
      "edit check, hung network, outage known (no network)",
      { ARBEIT_URL: hungUrl },
      false,
    );
    writeFileSync(join(dir, ".arbeit", "service.json"), JSON.stringify({ url: stopped, edit_check: "fail-closed" }));
    await measure("away_closed_known", "edit check, fail-closed, outage known: denied", {}, false);
    return rows;
  } finally {
    for (const socket of sockets) socket.destroy();
    hung.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printAwayRows(rows: ResultRow[]): string {
  const lines = ["| measurement | p50 ms | p99 ms | max ms | within 1 s |", "|---|---:|---:|---:|---|"];
  for (const row of rows)
    lines.push(
      `| ${row.label} | ${fmtMs(row.p50!)} | ${fmtMs(row.p99!)} | ${fmtMs(row.max!)} | ${row.metP99 ? "yes" : "no"} |`,
    );
  return `${lines.join("\n")}\n`;
}
