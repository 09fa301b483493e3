import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import Database from "better-sqlite3";

/** What the numbers were measured on. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  sqlite: string;
  betterSqlite3: string;
  commit: string;
  loadAverageStart: number[];
  loadAverageEnd?: number[];
  date: string;
  /** The store measured, when it is not the SQLite file: e.g. "Postgres 15.8, local TCP". */
  store?: string;
}

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) return line.split(":")[1]!.trim();
  } catch {
    // not Linux: fall through
  }
  return cpus()[0]?.model ?? "unknown";
}

function gitCommit(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return "unknown";
  }
}

export function machineInfo(): MachineInfo {
  const db = new Database(":memory:");
  const sqlite = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
  db.close();
  const pkg = JSON.parse(
    readFileSync(new URL("../node_modules/better-sqlite3/package.json", import.meta.url), "utf8"),
  ) as { version: string };
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${process.platform} ${release()}`,
    node: process.version,
    sqlite,
    betterSqlite3: pkg.version,
    commit: gitCommit(),
    loadAverageStart: loadavg().map((x) => Math.round(x * 100) / 100),
    date: new Date().toISOString(),
  };
}

export function finishMachineInfo(info: MachineInfo): MachineInfo {
  return { ...info, loadAverageEnd: loadavg().map((x) => Math.round(x * 100) / 100) };
}
