import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { ResultRow } from "./results.js";
import { summarize } from "./stats.js";

/**
 * CPU time of one CLI call beside `node -e 0`, in the same run, interleaved round by round so
 * that load from other processes hits both alike.
 *
 * How the child's CPU is read: Linux adds the user and system time of every child a process
 * has waited for to that process's cutime and cstime (/proc/self/stat, fields 16 and 17).
 * spawnSync waits for its child, so the growth of those two fields across a round of calls is
 * exactly the CPU the round's children used: all their threads (V8's compiler and GC helpers,
 * libuv's pool) from exec to exit, nothing of ours. The fields are in clock ticks (10 ms at the
 * usual 100 Hz), so each round runs several calls and the error is a tick per round.
 */

export interface CliCommand {
  name: string;
  label: string;
  argv: string[];
  /** What the command reads on stdin (a hook's payload); nothing when absent. */
  input?: string;
  /** Exit codes that are answers, not failures (status exits 1 when something needs attention); [0] when absent. */
  exitCodes?: readonly number[];
}

function clockTicksPerSecond(): number {
  const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const value = Number(out.stdout?.trim());
  return Number.isFinite(value) && value > 0 ? value : 100;
}

function childCpuTicks(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[13]) + Number(fields[14]);
}

export function cliCpuAvailable(): string | undefined {
  if (process.platform !== "linux" || !existsSync("/proc/self/stat")) return "needs Linux /proc";
  return undefined;
}

export interface CliCpuResult {
  /** Mean CPU ms per call, one entry per round, by command name. */
  rounds: Record<string, number[]>;
  wall: Record<string, number[]>;
}

export function measureCliCpu(
  commands: CliCommand[],
  options: { rounds: number; callsPerRound: number },
): CliCpuResult {
  const tick = 1000 / clockTicksPerSecond();
  const rounds: Record<string, number[]> = {};
  const wall: Record<string, number[]> = {};
  for (const command of commands) {
    rounds[command.name] = [];
    wall[command.name] = [];
    // One untimed call each: page cache and the CLI's code cache are warm, as on a dev machine.
    spawnSync(command.argv[0]!, command.argv.slice(1), {
      input: command.input ?? "",
      stdio: ["pipe", "ignore", "ignore"],
    });
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const command of commands) {
      const before = childCpuTicks();
      for (let i = 0; i < options.callsPerRound; i++) {
        const start = process.hrtime.bigint();
        const out = spawnSync(command.argv[0]!, command.argv.slice(1), {
          input: command.input ?? "",
          stdio: ["pipe", "ignore", "pipe"],
        });
        wall[command.name]!.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (!(command.exitCodes ?? [0]).includes(out.status ?? -1))
          throw new Error(`${command.label} exited ${out.status}: ${out.stderr}`);
      }
      rounds[command.name]!.push(((childCpuTicks() - before) * tick) / options.callsPerRound);
    }
  }
  return { rounds, wall };
}

export function median(values: readonly number[]): number {
  return summarize(values).p50;
}

/** Rows for the report: each CLI command's CPU as a ratio of the baseline's. */
export function cliRows(
  result: CliCpuResult,
  commands: CliCommand[],
  baseline: string,
  headlines: readonly string[],
  targetRatio: number,
): ResultRow[] {
  const base = median(result.rounds[baseline]!);
  return commands.map((command) => {
    const cpu = median(result.rounds[command.name]!);
    const wall = summarize(result.wall[command.name]!);
    const ratio = cpu / base;
    const isHeadline = headlines.includes(command.name);
    return {
      name: `cli_${command.name}`,
      label: command.label,
      kind: command.name === baseline ? "info" : "cpu-ratio",
      iterations: result.wall[command.name]!.length,
      p50: wall.p50,
      p99: wall.p99,
      value: command.name === baseline ? cpu : ratio,
      unit: command.name === baseline ? "ms CPU" : "x node -e 0",
      ...(isHeadline ? { target: `<= ${targetRatio}x node -e 0` } : {}),
      met: isHeadline ? ratio <= targetRatio : null,
      note: `${cpu.toFixed(1)} ms CPU per call (median of ${result.rounds[command.name]!.length} rounds: ${result.rounds[
        command.name
      ]!.map((x) => x.toFixed(0)).join(" ")}); p50/p99 are wall time`,
    };
  });
}
