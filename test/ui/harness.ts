import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { createMigratedSchema, dropSchema, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The dashboard as a person meets it: the real `arbeit ui` process of the built CLI, and a real
 * headless Chromium (Debian's `chromium`) driven by playwright-core.
 */

const CHROMIUM = process.env.ARBEIT_TEST_CHROMIUM ?? "/usr/bin/chromium";

/** The `skip` option for tests that need Chromium (missing: skipped with a message; under CI: a failure). */
export function chromiumSkip(): string | false {
  return requirement(
    "the dashboard's browser tests",
    existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root in a container Chromium needs --no-sandbox; the rest keep it from calling out to
    // Google's services, which this machine's closed network refuses.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 30_000,
  });
}

export interface Dashboard {
  /** The URL `arbeit ui` printed first: it carries the token. */
  url: string;
  /** http://127.0.0.1:<port> */
  origin: string;
  token: string;
  /** Everything the server wrote, for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `arbeit ui --port 0 [...args]` in `cwd`; resolves once it printed its URL. */
export function startDashboard(
  cwd: string,
  options: { args?: string[]; env?: Record<string, string> } = {},
): Promise<Dashboard> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const key of ARBEIT_SETTINGS) if (!options.env?.[key]) delete env[key];
  const child: ChildProcess = spawn(process.execPath, [CLI, "ui", "--port", "0", ...(options.args ?? [])], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`arbeit ui printed no URL within 20 s.\nstdout: ${out}\nstderr: ${err}`));
    }, 20_000);
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline < 0 || started) return;
      started = true;
      clearTimeout(timer);
      const url = new URL(out.slice(0, newline).trim());
      resolve({
        url: url.href,
        origin: url.origin,
        token: new URLSearchParams(url.hash.slice(1)).get("token") ?? "",
        output: () => `stdout: ${out}\nstderr: ${err}`,
        stop,
      });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`arbeit ui exited (${code}) before printing its URL.\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

export type Engine = "sqlite" | "postgres";

export interface UiProject {
  dir: string;
  /** What every process of this project needs in its environment (the Postgres schema, say). */
  env: Record<string, string>;
  /** Runs the real CLI in the project, as another process would; fails the test on a tool error. */
  cli(args: string[], input?: string): Promise<any>;
  close(): Promise<void>;
}

/** A project initialised by the real CLI, on a SQLite file or in a Postgres schema of its own. */
export async function uiProject(engine: Engine): Promise<UiProject> {
  const { dir, cleanup } = tempDir("arbeit-ui-");
  const schema = uniqueSchema("arbeit_ui");
  const env: Record<string, string> =
    engine === "postgres" ? { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema } : {};
  const cli = async (args: string[], input?: string) => {
    const result = await runCli([...args, "--json"], { cwd: dir, env, ...(input === undefined ? {} : { input }) });
    if (result.code !== 0)
      throw new Error(`arbeit ${args.join(" ")} failed (${result.code}): ${result.stdout}${result.stderr}`);
    return result.json?.data;
  };
  if (engine === "postgres") await createMigratedSchema(schema);
  await cli(["init"]);
  return {
    dir,
    env,
    cli,
    async close() {
      if (engine === "postgres") await dropSchema(schema);
      cleanup();
    },
  };
}

/**
 * Another web server on this host (a dev server, a notebook, another user's page), visited in a
 * tab of `context`: the page loads an image and fetches with credentials. Returns every request's
 * headers as it received them, and what the tab could read from its own localStorage under `key`.
 */
export async function visitAnotherServer(
  context: BrowserContext,
  key: string,
): Promise<{ headers: Array<Record<string, string | string[] | undefined>>; stored: string | null }> {
  const headers: Array<Record<string, string | string[] | undefined>> = [];
  const other = createServer((req, res) => {
    headers.push(req.headers);
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<!doctype html><title>Another server</title><img src='/pixel.png'><p>hello</p>");
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  const tab = await context.newPage();
  try {
    await tab.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    await tab.getByText("hello").waitFor();
    const stored = await tab.evaluate(async (key) => {
      await fetch("/fetched", { credentials: "include" });
      return (globalThis as any).localStorage.getItem(key) as string | null;
    }, key);
    return { headers, stored };
  } finally {
    await tab.close();
    await new Promise((resolve) => other.close(resolve));
  }
}

/** A person at the dashboard of a project: its server, the browser and the page, signed in. */
export interface SignedIn {
  dashboard: Dashboard;
  browser: Browser;
  page: Page;
}

/**
 * `arbeit ui --as alice` on `project`, and Chromium on the URL it printed (which hands the page
 * its token), waiting for the first view.
 */
export async function signIn(project: UiProject, viewport = { width: 1280, height: 800 }): Promise<SignedIn> {
  const dashboard = await startDashboard(project.dir, { env: project.env, args: ["--as", "alice"] });
  const browser = await launchChromium();
  const page = await (await browser.newContext({ viewport })).newPage();
  await page.goto(dashboard.url);
  await page.locator("[data-view]").first().waitFor();
  return { dashboard, browser, page };
}

/** Ends what `signIn` and `uiProject` started, whichever of them got going. */
export async function signOut(signedIn: Partial<SignedIn> | undefined, project: UiProject | undefined): Promise<void> {
  await signedIn?.browser?.close();
  await signedIn?.dashboard?.stop();
  await project?.close();
}
