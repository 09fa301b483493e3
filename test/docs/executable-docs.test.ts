/**
 * Every command the README and docs/*.md show is run, and what it prints is compared with what
 * the page shows, so the pages cannot drift from the code. docs/contributing.md ("Writing docs")
 * explains the convention to writers; in short:
 *
 * - A fenced block marked `sh`, `bash`, `shell` or `console`, or an unmarked one whose first line
 *   starts with `$ `, is a command block. Other blocks (diagrams, usage synopses, TypeScript,
 *   JSON examples) are left alone.
 * - Transcript: a command block with `$ ` lines. Each `$ ` line (continued by a trailing `\`) is
 *   run on a pseudo-terminal, so the CLI prints its readable text as it does for a reader; the
 *   lines after it, up to the next `$ ` line, are its output and must match. An empty output means
 *   the command prints nothing. Every command must exit 0.
 * - Script: a command block without `$ ` lines runs as one bash script (-e, pipefail), without a
 *   terminal. Its output is not compared; it must exit 0.
 * - Each page runs in a fresh temporary project, /home/you/my-app (HOME is /home/you), a git
 *   repository with one commit; its blocks run in order, so later steps see earlier ones. Arbeit
 *   is installed there from this checkout, unless the page installs it itself
 *   (`npm install --save-dev /path/to/arbeit`): then the page's own step must work, as npx runs
 *   offline and cannot fetch `arbeit` from the registry.
 * - What differs on a real machine is normalised: ids are mapped (the first new id the run prints
 *   stands for the first new id the page shows there, for the rest of the page), times, durations
 *   and version numbers are masked, the temporary root is stripped from paths, this checkout is
 *   /path/to/arbeit, and the test database is the page's postgres://…@db.internal URL.
 * - Markers, as an HTML comment on the line(s) before a block:
 *     <!-- doc-test: not run: <reason> -->   the block cannot run here; the test lists it
 *     <!-- doc-test: exit <code> -->         the block's last command exits with this code
 *     <!-- doc-test: fresh project -->       start a new project for this block and the rest
 *     <!-- doc-test: file <path> -->         the block is that file of the project (JSON is
 *                                            compared parsed, other files as text)
 *   and, before a page's first block, <!-- doc-test: continues <page> --> to go on in a copy of
 *   that page's project, with its ids.
 *
 * ARBEIT_DOCS_UPDATE=1 rewrites the shown outputs and files from the run instead of failing; the
 * pages keep their own times and ids where the structure is unchanged. Review the diff.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { dropSchema, postgresSkip } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import { parseDoc } from "./doc-blocks.js";
import { CHECKOUT, DOC_PAGES, DocProject } from "./doc-project.js";
import { type NotRun, needsPostgres, type PageResult, runPage } from "./doc-runner.js";

const UPDATE = process.env.ARBEIT_DOCS_UPDATE === "1";
const UPDATE_HINT =
  "If the code is right and the page is stale, run `ARBEIT_DOCS_UPDATE=1 node scripts/test.mjs test/docs/executable-docs.test.ts` " +
  "to rewrite the shown outputs from a real run, then review the diff (git diff README.md docs/).";

// The pages' commands need a terminal (util-linux `script` gives one), jq and git, as a reader's shell has.
const missing = ["script", "jq", "git"].filter((tool) => spawnSync(tool, ["--version"]).status !== 0);
const tools = requirement(
  "the executable docs",
  missing.length === 0 ? undefined : `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not installed`,
);

describe("executable docs", { concurrency: false, skip: tools }, () => {
  const results = new Map<string, PageResult>();
  const notRun: NotRun[] = [];
  after(() => {
    for (const result of results.values()) for (const project of result.projects) project.cleanup();
  });

  it("runs `npx arbeit` from this checkout, offline", () => {
    const bare = DocProject.create(true);
    const installed = DocProject.create(false);
    try {
      const version = JSON.parse(readFileSync(join(CHECKOUT, "package.json"), "utf8")).version;
      const run = (project: DocProject) => {
        const { status, stdout } = spawnSync("npx", ["arbeit", "--version"], {
          cwd: project.dir,
          env: project.env(),
          encoding: "utf8",
        });
        return { status, stdout: String(stdout).trim() };
      };
      assert.notEqual(run(bare).status, 0, "without an install npx must fail, not fetch arbeit from the registry");
      assert.deepEqual(run(installed), { status: 0, stdout: version });
      const bin = realpathSync(join(installed.dir, "node_modules", ".bin", "arbeit"));
      assert.equal(bin, realpathSync(join(CHECKOUT, "bin", "arbeit.cjs")));
    } finally {
      bare.cleanup();
      installed.cleanup();
    }
  });

  for (const name of DOC_PAGES) {
    const page = parseDoc(readFileSync(join(CHECKOUT, name), "utf8"), name);
    if (!page.blocks.some((block) => block.kind !== "other")) continue;
    it(`${name}: every command prints what the page shows`, async (t) => {
      if (needsPostgres(page)) {
        const skip = await postgresSkip();
        if (skip) return t.skip(skip);
      }
      let from: DocProject | undefined;
      if (page.continues) {
        const base = results.get(page.continues);
        assert.ok(base, `${name} continues ${page.continues}, which has not run (it must be run before it).`);
        from = base.projects.at(-1);
      }
      const result = runPage(name, page, { update: UPDATE, from });
      results.set(name, result);
      if (needsPostgres(page)) for (const project of result.projects) await dropSchema(project.schema);
      notRun.push(...result.notRun);
      if (UPDATE && result.updated > 0) {
        writeFileSync(join(CHECKOUT, name), result.text);
        t.diagnostic(`updated ${result.updated} output(s) in ${name}`);
      }
      assert.ok(result.failures.length === 0, `${result.failures.join("\n\n")}\n\n${UPDATE_HINT}`);
    });
  }

  it("lists the blocks the pages mark as not run", (t) => {
    for (const { where, reason } of notRun) t.diagnostic(`not run: ${where}: ${reason}`);
    process.stdout.write(
      `\nDoc blocks not run (${notRun.length}):\n${notRun.map(({ where, reason }) => `  - ${where}: ${reason}`).join("\n")}\n`,
    );
    // A block nobody runs can go stale again; each must say why it cannot run here.
    for (const { where, reason } of notRun) assert.ok(reason.length >= 10, `${where}: say why the block cannot run`);
  });
});
