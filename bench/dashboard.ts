/**
 * The dashboard's numbers (`npm run bench -- --dashboard`): page weight; first render of the
 * home view, the board and the graph (plain, and grouped by epic) at 10,000 tasks in headless Chromium; change-to-screen latency (a task
 * created by another process until the open page shows it); the server's memory with 20 pages
 * open. Writes bench/.data/dashboard.json; docs/benchmarks.md keeps the figures.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";
import { ArbeitService } from "../src/service/arbeit-service.js";
import { SqliteTaskStore } from "../src/store/sqlite/sqlite-task-store.js";
import { percentile } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");
const ASSETS = join(ROOT, "dist", "ui", "assets");
const CHROMIUM = process.env.ARBEIT_TEST_CHROMIUM ?? "/usr/bin/chromium";
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Options {
  tasks: number;
  renders: number;
  changes: number;
  pages: number;
  outDir: string;
}

/** 10,000 tasks as a project holds them: epics with children, chains of blocks edges, some claimed. */
async function seed(dir: string, tasks: number): Promise<void> {
  mkdirSync(join(dir, ".arbeit"), { recursive: true });
  const store = await SqliteTaskStore.open(join(dir, ".arbeit", "arbeit.db"));
  const service = new ArbeitService(store, { projectRoot: dir });
  const caller = { session: "ses-seed", agent: "seed" };
  let made = 0;
  let previous: string | undefined;
  const types = ["feature", "bug", "chore", "investigation"] as const;
  while (made < tasks) {
    await service.atomically(async () => {
      const epic = (await service.createTask({ title: `Epic ${made}`, type: "epic" }, caller)).data.task.id;
      made++;
      for (let i = 0; i < 49 && made < tasks; i++, made++) {
        // One task in four waits on the one before it: chains for the graph and its critical path.
        const blockedBy = previous && made % 4 === 0 ? [previous] : undefined;
        const task = (
          await service.createTask(
            {
              title: `Task ${made}: ${types[made % 4]} work`,
              type: types[made % 4],
              parent_id: epic,
              priority: made % 5,
              blocked_by: blockedBy,
            },
            caller,
          )
        ).data.task;
        previous = task.id;
      }
    });
  }
  await store.close();
}

interface Server {
  child: ChildProcess;
  url: string;
  origin: string;
  stop(): Promise<void>;
}

function serve(dir: string): Promise<Server> {
  const child = spawn(process.execPath, [CLI, "ui", "--port", "0"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        const url = new URL(line.trim());
        resolve({
          child,
          url: url.href,
          origin: url.origin,
          stop: () =>
            new Promise((done) => {
              child.once("exit", () => done());
              child.kill("SIGINT");
            }),
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`arbeit ui exited (${code})`)));
  });
}

const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};

/** The little of the browser's globals the bench reads inside the page (no DOM types here). */
interface PageGlobals {
  document: { body: { textContent: string | null } };
  performance: { getEntriesByName(name: string): Array<{ duration: number }> };
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Milliseconds from navigation until the view has drawn its tasks. */
async function firstRender(page: Page, url: string, selector: string): Promise<number> {
  const start = Date.now();
  await page.goto(url);
  await page.waitForSelector(selector, { timeout: 60_000 });
  return Date.now() - start;
}

export async function runDashboardBench(options: Options): Promise<void> {
  if (!existsSync(join(ASSETS, "app.js"))) throw new Error("Build first: npm run build");
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is needed at ${CHROMIUM} (apt-get install chromium).`);
  const results: Record<string, unknown> = {};
  // What every view loads (app.js, app.css), and what only the graph adds (its layout chunk).
  const files = readdirSync(ASSETS).map((name) => {
    const body = readFileSync(join(ASSETS, name));
    return { name, bytes: body.length, gzip_bytes: gzipSync(body).length };
  });
  const sum = (names: (name: string) => boolean, key: "bytes" | "gzip_bytes") =>
    files.filter((file) => names(file.name)).reduce((total, file) => total + file[key], 0);
  const first = (name: string) => name === "app.js" || name === "app.css";
  results.page_weight = {
    files,
    every_view_bytes: sum(first, "bytes"),
    every_view_gzip_bytes: sum(first, "gzip_bytes"),
    graph_adds_bytes: sum((name) => !first(name), "bytes"),
    graph_adds_gzip_bytes: sum((name) => !first(name), "gzip_bytes"),
  };
  log(`page weight: ${JSON.stringify(results.page_weight)}`);

  const dir = join(options.outDir, `dashboard-${options.tasks}`);
  rmSync(dir, { recursive: true, force: true });
  log(`seeding ${options.tasks} tasks...`);
  await seed(dir, options.tasks);
  const server = await serve(dir);
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(server.url);
    results.server_rss_idle_mb = rssMb(server.child.pid!);

    for (const [view, path, selector] of [
      // The home view has drawn once its last part, progress (epics and the chart), is there.
      ["home", "/", '[data-view="home"] figure.daily'],
      ["board", "/board", '[data-view="board"] [data-task-id]'],
      ["graph", "/graph", '[data-view="graph"] [data-task-id]'],
      // Grouped, the layout is a compound one: boxes round each epic's tasks.
      ["graph_by_epic", "/graph?group=epic", '[data-view="graph"] [data-cluster]'],
    ] as const) {
      const samples: number[] = [];
      const layouts: number[] = [];
      for (let i = 0; i < options.renders; i++) {
        samples.push(await firstRender(page, `${server.origin}${path}`, selector));
        // The graph page measures its layout (dagre) alone: the rest is fetching and drawing.
        const layout = await page.evaluate(
          () => (globalThis as unknown as PageGlobals).performance.getEntriesByName("arbeit-graph-layout")[0]?.duration,
        );
        if (layout !== undefined) layouts.push(Math.round(layout));
      }
      results[`first_render_${view}_ms`] = {
        median: median(samples),
        samples,
        ...(layouts.length > 0 ? { layout_median: median(layouts), layouts } : {}),
      };
      log(
        `first render of the ${view} at ${options.tasks} tasks: median ${median(samples)} ms (${samples.join(", ")})` +
          (layouts.length > 0 ? `, of which the layout: median ${median(layouts)} ms (${layouts.join(", ")})` : ""),
      );
    }

    // Change to screen: another process writes; the open board shows it.
    await page.goto(`${server.origin}/board`);
    await page.waitForSelector('[data-view="board"] [data-task-id]', { timeout: 60_000 });
    const store = await SqliteTaskStore.open(join(dir, ".arbeit", "arbeit.db"));
    const service = new ArbeitService(store, { projectRoot: dir });
    const latencies: number[] = [];
    for (let i = 0; i < options.changes; i++) {
      const title = `Live change ${i} ${Date.now()}`;
      const start = Date.now();
      await service.createTask({ title, priority: 0 }, { session: "ses-other", agent: "other" });
      // A function, not a string: the page's CSP allows no eval.
      await page.waitForFunction(
        (text) => (globalThis as unknown as PageGlobals).document.body.textContent?.includes(text),
        title,
        {
          polling: "raf",
          timeout: 30_000,
        },
      );
      latencies.push(Date.now() - start);
    }
    await store.close();
    const sorted = [...latencies].sort((a, b) => a - b);
    results.change_to_screen_ms = {
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      max: sorted.at(-1),
      n: sorted.length,
    };
    log(`change to screen: p50 ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms`);

    // Memory with many pages open, each holding its live stream.
    const pages: Page[] = [page];
    for (let i = 1; i < options.pages; i++) {
      const another = await context.newPage();
      await another.goto(`${server.origin}/board`);
      // A page in the background may not paint: drawn (attached) is what counts here.
      await another.waitForSelector('[data-view="board"] [data-task-id]', { state: "attached", timeout: 120_000 });
      pages.push(another);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    results.server_rss_pages_mb = { pages: pages.length, rss_mb: rssMb(server.child.pid!) };
    log(`server memory with ${pages.length} pages open: ${rssMb(server.child.pid!).toFixed(1)} MB RSS`);
  } finally {
    await browser?.close();
    await server.stop();
  }
  const chromiumVersion = spawnSync(CHROMIUM, ["--version"], { encoding: "utf8" }).stdout.trim();
  results.machine = { chromium: chromiumVersion, node: process.version, tasks: options.tasks };
  mkdirSync(options.outDir, { recursive: true });
  writeFileSync(join(options.outDir, "dashboard.json"), `${JSON.stringify(results, null, 2)}\n`);
  log(`Wrote ${join(options.outDir, "dashboard.json")}.`);
}
