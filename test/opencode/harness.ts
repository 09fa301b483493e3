import { spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { hostBinary } from "../helpers/hosts.js";
import { tempDir } from "../helpers/temp.js";

/** The real OpenCode, run headless in a hermetic home against a scripted model (docs/opencode.md). */

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** The real binary, from the test cache (test/helpers/hosts.ts) or ARBEIT_TEST_OPENCODE. */
export const OPENCODE = hostBinary("opencode").path;
const PLUGIN_SDK = join(REPO, "node_modules", "@opencode-ai", "plugin");
const PLUGIN_SDK_VERSION = "1.18.33";

export interface OpencodeSandbox {
  root: string;
  home: string;
  project: string;
  env: Record<string, string>;
  cleanup(): void;
}

/**
 * OpenCode npm-installs @opencode-ai/plugin into each config dir that lacks it (and blocks for
 * about 70 s when offline): seed package.json, package-lock.json and node_modules first.
 */
export function seedConfigDir(dir: string): void {
  mkdirSync(join(dir, "node_modules", "@opencode-ai"), { recursive: true });
  const dependencies = { "@opencode-ai/plugin": PLUGIN_SDK_VERSION };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  const lock = {
    name: "opencode-config",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { dependencies },
      "node_modules/@opencode-ai/plugin": { version: PLUGIN_SDK_VERSION },
    },
  };
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  symlinkSync(PLUGIN_SDK, join(dir, "node_modules", "@opencode-ai", "plugin"), "dir");
}

export function opencodeConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    $schema: "https://opencode.ai/config.json",
    model: "fake/scripted",
    small_model: "fake/scripted",
    autoupdate: false,
    share: "disabled",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: "http://127.0.0.1:{env:FAKE_PORT}/v1", apiKey: "x" },
        models: { scripted: { name: "Scripted", tool_call: true, limit: { context: 100000, output: 4096 } } },
      },
    },
    permission: { edit: "allow", read: "allow", bash: "allow" },
    ...extra,
  };
}

/** A temp root holding a HOME (with XDG dirs) and, beside it, the project OpenCode runs in. */
export function createSandbox(): OpencodeSandbox {
  const { dir: root, cleanup } = tempDir("arbeit-opencode-");
  const home = join(root, "home");
  const project = join(root, "project");
  const xdg = {
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
  };
  for (const dir of [project, ...Object.values(xdg)]) mkdirSync(dir, { recursive: true });
  seedConfigDir(join(xdg.XDG_CONFIG_HOME, "opencode"));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    ...xdg,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    NO_COLOR: "1",
  };
  return { root, home, project, env, cleanup };
}

export interface OpencodeRun {
  code: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** stdout's JSON event lines. */
  events: any[];
}

/**
 * `opencode run --format json <prompt> </dev/null`, with cwd and PWD both the project, in a
 * process group of its own (`started` is told its id, which is the group's).
 */
export function runOpencode(
  sandbox: OpencodeSandbox,
  prompt: string,
  options: { port: number; timeoutMs: number; args?: string[]; started?: (pid: number) => void },
): Promise<OpencodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(OPENCODE, ["run", "--format", "json", ...(options.args ?? []), prompt], {
      cwd: sandbox.project,
      env: { ...sandbox.env, PWD: sandbox.project, FAKE_PORT: String(options.port) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    if (child.pid) options.started?.(child.pid);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      // The whole process group: OpenCode may have started helpers of its own.
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const events = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return [];
          }
        });
      resolve({ code, timedOut, stdout, stderr, events });
    });
  });
}

/** `opencode serve` on 127.0.0.1: the headless HTTP server a desktop or web client drives. */
export interface OpencodeServer {
  /** Where it listens, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** What it printed so far (with `--print-logs`, its log). */
  output(): string;
  /** A JSON request to the server; throws on an HTTP error status, with the body. */
  request(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/**
 * Starts `opencode serve --port 0 --hostname 127.0.0.1` in the project (cwd and PWD both) and
 * waits for the line that names its address, for at most `startMs`.
 */
export function startOpencodeServer(
  sandbox: OpencodeSandbox,
  options: { port: number; startMs: number; env?: Record<string, string> },
): Promise<OpencodeServer> {
  const child = spawn(OPENCODE, ["serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs"], {
    cwd: sandbox.project,
    env: { ...sandbox.env, ...options.env, PWD: sandbox.project, FAKE_PORT: String(options.port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.on("close", () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    // The whole process group: OpenCode may have started helpers of its own.
    if (!exited && child.pid) process.kill(-child.pid, "SIGKILL");
    await closed;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`opencode serve did not say where it listens within ${options.startMs} ms\n${output}`));
    }, options.startMs);
    const seen = (chunk: Buffer) => {
      output += chunk;
      const url = /opencode server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.stdout.off("data", seen);
      child.stdout.on("data", (more) => (output += more));
      resolve({
        url,
        output: () => output,
        async request(method, path, body) {
          const response = await fetch(`${url}${path}`, {
            method,
            headers: body === undefined ? {} : { "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const text = await response.text();
          if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
          return text === "" ? undefined : JSON.parse(text);
        },
        stop,
      });
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void closed.then(() => {
      clearTimeout(timer);
      reject(new Error(`opencode serve exited before it listened\n${output}`));
    });
  });
}

/** `promise`, or a failure saying `why` once `ms` passed (the timer cleared either way). */
export async function within<T>(promise: Promise<T>, ms: number, why: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(why())), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
