import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { initProject } from "../src/service/project.js";
import { claudeCommand } from "../src/setup/claude-config.js";
import type { ResultRow } from "./results.js";
import { nowMs, summarize } from "./stats.js";

/**
 * How long Claude Code waits for Arbeit's tools: from starting the MCP server as `.mcp.json`
 * declares it to the answer of `tools/list`, through the MCP SDK's client over stdio. The server
 * setup writes for a project with its own copy (`sh -c` running node_modules/.bin/arbeit) is
 * timed beside the `npx --no-install arbeit mcp` earlier versions wrote, round by round, so that
 * load from other processes hits both alike. Needs dist/ built.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TARGET_MS = 300;

/** A project with Arbeit installed as npm installs it, and its store. */
async function projectWithArbeit(): Promise<{ dir: string; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "arbeit-bench-mcp-"));
  writeFileSync(join(dir, "package.json"), '{"name": "bench-app", "private": true}\n');
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "arbeit"), "dir");
  symlinkSync("../arbeit/bin/arbeit.cjs", join(dir, "node_modules", ".bin", "arbeit"));
  await initProject({ cwd: dir });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function startToToolList(server: { command: string; args: string[] }, dir: string): Promise<number> {
  const client = new Client({ name: "bench-mcp-start", version: "1.0.0" });
  const started = nowMs();
  await client.connect(
    new StdioClientTransport({
      ...server,
      cwd: dir,
      // What Claude Code gives the servers it starts; npm must not look for updates.
      env: { PATH: process.env.PATH ?? "", HOME: dir, CLAUDE_PROJECT_DIR: dir, npm_config_update_notifier: "false" },
    }),
  );
  const { tools } = await client.listTools();
  const elapsed = nowMs() - started;
  await client.close();
  if (tools.length === 0) throw new Error(`${server.command} ${server.args.join(" ")} listed no tools`);
  return elapsed;
}

export async function measureMcpStart(runs: number): Promise<ResultRow[]> {
  const { dir, cleanup } = await projectWithArbeit();
  const forms = [
    {
      name: "mcp_start_setup",
      label: "MCP server start to tools/list, as setup writes it",
      server: claudeCommand(dir).mcp,
    },
    {
      name: "mcp_start_npx",
      label: "MCP server start to tools/list, through npx --no-install",
      server: { command: "npx", args: ["--no-install", "arbeit", "mcp"] },
    },
  ];
  const samples = new Map(forms.map((form) => [form.name, [] as number[]]));
  // A bare Node start in the same rounds: on a loaded machine every figure grows with it.
  const bare: number[] = [];
  try {
    // One untimed start each: the page cache and Node's code cache warm, as on a developer's machine.
    for (const form of forms) await startToToolList(form.server, dir);
    for (let round = 0; round < runs; round++) {
      for (const form of forms) samples.get(form.name)!.push(await startToToolList(form.server, dir));
      const started = nowMs();
      spawnSync(process.execPath, ["-e", "0"]);
      bare.push(nowMs() - started);
    }
  } finally {
    cleanup();
  }
  const baseline = summarize(bare).p50;
  return forms.map((form, at) => {
    const summary = summarize(samples.get(form.name)!);
    return {
      name: form.name,
      label: form.label,
      kind: "latency",
      iterations: summary.iterations,
      p50: summary.p50,
      p99: summary.p99,
      mean: summary.mean,
      max: summary.max,
      ...(at === 0
        ? { target: `<= ${TARGET_MS} ms`, met: summary.p50 <= TARGET_MS, metP99: summary.p99 <= TARGET_MS }
        : { met: null }),
      note: `\`${form.server.command} ${form.server.args.join(" ")}\`, ${runs} starts, interleaved; \`node -e 0\` took ${baseline.toFixed(0)} ms (median) in the same rounds`,
    };
  });
}

/** `node --import tsx bench/mcp-start.ts [runs]`: this measurement alone. */
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rows = await measureMcpStart(Number(process.argv[2] ?? 15));
  for (const row of rows) {
    process.stdout.write(
      `${row.label}: median ${row.p50!.toFixed(0)} ms, p99 ${row.p99!.toFixed(0)} ms, max ${row.max!.toFixed(0)} ms (${row.note})\n`,
    );
  }
}
