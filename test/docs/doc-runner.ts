import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import type { DocBlock, DocPage } from "./doc-blocks.js";
import { CHECKOUT, DocProject } from "./doc-project.js";
import { formatJson } from "./format-json.js";
import { keepShownVolatiles, mask, tidy } from "./normalise.js";

/** Text a page shows in commands for things that differ on a real machine, and what they stand for here. */
const DOC_URL = "postgres://arbeit:secret@db.internal:5432/work";

interface Swap {
  doc: string;
  real: (project: DocProject) => string;
}

/** Replaced in commands (doc → real) and, the other way, in output (real → doc). */
const SWAPS: Swap[] = [
  { doc: "/path/to/arbeit", real: () => CHECKOUT },
  { doc: DOC_URL, real: () => TEST_DATABASE_URL },
  { doc: "ARBEIT_DATABASE_SCHEMA=arbeit", real: (p) => `ARBEIT_DATABASE_SCHEMA=${p.schema}` },
];

/** Whether a page's commands need the Postgres server the tests use. */
export function needsPostgres(page: DocPage): boolean {
  return page.blocks.some((block) => block.kind !== "other" && block.content.includes(DOC_URL));
}

/** Whether a run of blocks installs Arbeit itself: then its project starts without it. */
function installsArbeit(blocks: DocBlock[]): boolean {
  return blocks.some(
    (block) =>
      (block.kind === "script" || block.kind === "transcript") &&
      /npm install .*\/path\/to\/arbeit/.test(block.content),
  );
}

export interface NotRun {
  where: string;
  reason: string;
}

export interface PageResult {
  failures: string[];
  notRun: NotRun[];
  /** How many outputs an update rewrote; the page text to write when there were any. */
  updated: number;
  text: string;
  /** The project the page ended in (for pages that continue it); the caller cleans it up. */
  projects: DocProject[];
}

const TIMEOUT_MS = 120_000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape that starts a colour sequence
const SGR = /\x1b\[[0-9;]*m/g;

function toReal(text: string, project: DocProject): string {
  let result = project.ids.toReal(text);
  for (const swap of SWAPS) result = result.replaceAll(swap.doc, swap.real(project));
  return result;
}

/** Real output in the page's terms: its paths, its ids, its names for the database. */
function toDoc(text: string, project: DocProject): string {
  let result = text
    .replaceAll("\r\n", "\n")
    // Colours a reader's terminal shows (jq's, say) are not part of the text a page can show.
    .replace(SGR, "")
    .replaceAll(project.root, "")
    .replaceAll(CHECKOUT, "/path/to/arbeit")
    .replaceAll(project.schema, "arbeit");
  // Messages name the database without its password.
  const url = new URL(TEST_DATABASE_URL);
  url.password = "";
  result = result
    .replaceAll(TEST_DATABASE_URL, DOC_URL)
    .replaceAll(url.href, "postgres://arbeit@db.internal:5432/work");
  return project.ids.toDoc(result);
}

/** One command on a terminal: util-linux `script` gives it a pseudo-terminal, as a reader's shell has. */
function onTerminal(command: string, project: DocProject): { code: number; output: string } {
  const result = spawnSync("script", ["-q", "-e", "-c", command, "/dev/null"], {
    cwd: project.dir,
    env: project.env(),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
  });
  return { code: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

function asScript(script: string, project: DocProject): { code: number; output: string } {
  const result = spawnSync("bash", ["-e", "-o", "pipefail", "-c", script], {
    cwd: project.dir,
    env: project.env(),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
  });
  return { code: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

function excerpt(text: string, limit = 60): string {
  const lines = text.split("\n");
  const shown = lines.slice(0, limit).map((line) => `    ${line}`);
  if (lines.length > limit) shown.push(`    ... (${lines.length - limit} more lines)`);
  return shown.join("\n");
}

function mismatch(where: string, what: string, shown: string, actual: string): string {
  const a = shown.split("\n");
  const b = actual.split("\n");
  let first = 0;
  while (first < a.length && first < b.length && mask(a[first]!) === mask(b[first]!)) first++;
  return [
    `${where}: ${what}`,
    `  first difference at output line ${first + 1}:`,
    `  - shown:  ${a[first] ?? "(end of output)"}`,
    `  + actual: ${b[first] ?? "(end of output)"}`,
    "  the page shows:",
    excerpt(shown),
    "  the run printed:",
    excerpt(actual),
  ].join("\n");
}

/**
 * Runs a page's blocks in order in its project (a new one at each `fresh project` marker) and
 * compares what they print with what the page shows. With `update`, differing outputs are
 * replaced by the real ones in the returned text instead of failing.
 */
export function runPage(name: string, page: DocPage, options: { update: boolean; from?: DocProject }): PageResult {
  const lines = [...page.lines];
  const failures: string[] = [];
  const notRun: NotRun[] = [];
  const replacements: { start: number; end: number; text: string }[] = [];
  const projects: DocProject[] = [];

  const segmentFrom = (index: number): DocBlock[] => {
    const rest = page.blocks.slice(index);
    const next = rest.findIndex((block, i) => i > 0 && block.markers.some((m) => m.kind === "fresh-project"));
    return next < 0 ? rest : rest.slice(0, next);
  };
  let project = options.from ? DocProject.continuing(options.from) : DocProject.create(installsArbeit(segmentFrom(0)));
  projects.push(project);

  for (const [index, block] of page.blocks.entries()) {
    const where = `${name}:${block.line}`;
    const notRunMarker = block.markers.find((m) => m.kind === "not-run");
    if (notRunMarker) {
      if (block.kind === "other") failures.push(`${where}: "not run" marks a block that is not a command anyway.`);
      notRun.push({ where, reason: notRunMarker.reason });
      continue;
    }
    if (block.kind === "other") continue;
    if (block.markers.some((m) => m.kind === "fresh-project")) {
      project = DocProject.create(installsArbeit(segmentFrom(index)));
      projects.push(project);
    }
    const exit = block.markers.find((m) => m.kind === "exit")?.code ?? 0;

    if (block.kind === "script") {
      const { code, output } = asScript(toReal(block.content, project), project);
      if (code !== exit) {
        failures.push(
          `${where}: the block exited with ${code}, not ${exit}. Its output:\n${excerpt(toDoc(output, project))}`,
        );
      }
      continue;
    }

    if (block.kind === "file") {
      const path = block.markers.find((m) => m.kind === "file")!.path;
      const file = join(project.dir, path);
      if (!existsSync(file)) {
        failures.push(`${where}: the page shows ${path}, but the commands before it did not create it.`);
        continue;
      }
      const actual = toDoc(readFileSync(file, "utf8"), project);
      const json = path.endsWith(".json");
      const same = json
        ? isDeepStrictEqual(JSON.parse(actual), JSON.parse(block.content))
        : tidy(actual) === tidy(block.content);
      if (same) continue;
      const real = json ? formatJson(JSON.parse(actual)) : tidy(actual);
      if (options.update) replacements.push({ start: block.contentStart, end: block.contentEnd, text: real });
      else failures.push(mismatch(where, `${path} differs from what the page shows.`, block.content, real));
      continue;
    }

    for (const [i, step] of block.steps.entries()) {
      const stepWhere = `${name}:${step.line}`;
      const { code, output } = onTerminal(toReal(step.command, project), project);
      const expectedCode = i === block.steps.length - 1 ? exit : 0;
      const real = tidy(toDoc(output, project));
      project.ids.learn(real, step.output);
      const actual = project.ids.toDoc(real);
      project.times.learn(actual, step.output);
      if (code !== expectedCode) {
        failures.push(
          `${stepWhere}: \`${step.command}\` exited with ${code}, not ${expectedCode}. Its output:\n${excerpt(actual)}`,
        );
        continue;
      }
      if (mask(actual) === mask(step.output)) continue;
      if (options.update) {
        replacements.push({
          start: step.outputStart,
          end: step.outputEnd,
          text: keepShownVolatiles(actual, step.output, project.times),
        });
      } else failures.push(mismatch(stepWhere, `\`${step.command}\` printed something else.`, step.output, actual));
    }
  }

  for (const { start, end, text } of replacements.sort((a, b) => b.start - a.start)) {
    lines.splice(start, end - start, ...(text === "" ? [] : text.split("\n")));
  }
  return { failures, notRun, updated: replacements.length, text: lines.join("\n"), projects };
}
