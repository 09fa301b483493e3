import type { MachineInfo } from "./machine.js";
import type { ResultRow } from "./results.js";
import type { Manifest } from "./seed.js";
import { fmtMs } from "./stats.js";

/** The markdown pasted into docs/benchmarks.md, generated from one run's results. */

function yesNo(value: boolean | null | undefined): string {
  if (value === null || value === undefined) return "—";
  return value ? "yes" : "**no**";
}

function missedBy(row: ResultRow): string {
  const target = Number(/([\d.]+)/.exec(row.target ?? "")?.[1]);
  if (!row.met && row.p50 !== undefined && Number.isFinite(target)) return ` (${(row.p50 / target).toFixed(1)}x)`;
  return "";
}

export function latencyTable(rows: ResultRow[]): string {
  const lines = [
    "| measurement | n | p50 ms | p99 ms | target | met (p50) | p99 within target |",
    "|---|---:|---:|---:|---|---|---|",
  ];
  for (const row of rows) {
    if (row.skipped) {
      lines.push(`| ${row.label} | — | — | — | ${row.target ?? "—"} | skipped: ${row.skipped} | — |`);
      continue;
    }
    lines.push(
      `| ${row.label} | ${row.iterations} | ${fmtMs(row.p50!)} | ${fmtMs(row.p99!)} | ${row.target ?? "—"} | ${yesNo(
        row.met,
      )}${missedBy(row)} | ${yesNo(row.metP99)} |`,
    );
  }
  return lines.join("\n");
}

export function otherTable(rows: ResultRow[]): string {
  const lines = ["| measurement | value | target | met | wall p50 / p99 ms | notes |", "|---|---:|---|---|---|---|"];
  for (const row of rows) {
    const value =
      row.value === undefined
        ? "—"
        : `${row.value.toFixed(row.unit === "x node -e 0" ? 2 : row.unit === "round trips" ? 0 : 1)} ${row.unit}`;
    const wall = row.p50 === undefined ? "—" : `${fmtMs(row.p50)} / ${fmtMs(row.p99!)}`;
    lines.push(`| ${row.label} | ${value} | ${row.target ?? "—"} | ${yesNo(row.met)} | ${wall} | ${row.note ?? ""} |`);
  }
  return lines.join("\n");
}

/** What agents read, in o200k tokens: deterministic, unlike everything else here. */
export function tokensTable(rows: ResultRow[]): string {
  const lines = ["| answer | tokens | target | met | notes |", "|---|---:|---|---|---|"];
  for (const row of rows)
    lines.push(`| ${row.label} | ${row.value ?? "—"} | ${row.target ?? "—"} | ${yesNo(row.met)} | ${row.note ?? ""} |`);
  return lines.join("\n");
}

export function datasetTable(manifest: Manifest): string {
  const c = manifest.counts;
  const lines = [
    "| rows | count |",
    "|---|---:|",
    ...Object.entries(c).map(([table, n]) => `| ${table} | ${n.toLocaleString("en-US")} |`),
  ];
  return lines.join("\n");
}

export function machineLines(info: MachineInfo): string {
  return [
    `- CPU: ${info.cpu}, ${info.cores} cores; ${info.memoryGiB} GiB RAM; ${info.os}`,
    `- Node ${info.node}, SQLite ${info.sqlite} (better-sqlite3 ${info.betterSqlite3})`,
    `- Commit ${info.commit}, ${info.date}`,
    `- Store: ${info.store ?? "SQLite file (WAL, synchronous=NORMAL)"}`,
    `- Load average (1/5/15 min) at start ${info.loadAverageStart.join(" / ")}, at end ${
      info.loadAverageEnd?.join(" / ") ?? "?"
    }`,
  ].join("\n");
}

export function renderMarkdown(info: MachineInfo, manifest: Manifest, rows: ResultRow[], seedNote: string): string {
  const latency = rows.filter((row) => row.kind === "latency");
  const tokens = rows.filter((row) => row.kind === "tokens");
  const other = rows.filter((row) => row.kind !== "latency" && row.kind !== "tokens");
  return [
    "### Machine",
    "",
    machineLines(info),
    "",
    "### Dataset",
    "",
    `${manifest.params.tasks.toLocaleString("en-US")} tasks (${manifest.projects} projects of 66 + a ${manifest.params.chain}-long blocks chain), ${seedNote}`,
    "",
    datasetTable(manifest),
    "",
    "### Latency (through invokeTool, in process)",
    "",
    latencyTable(latency),
    "",
    "### Throughput and CLI start-up",
    "",
    otherTable(other),
    "",
    ...(tokens.length > 0 ? ["### What agents read (o200k tokens)", "", tokensTable(tokens), ""] : []),
  ].join("\n");
}
