import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/** A plain HTTP proxy in front of a service that counts the requests it passes on. */
export interface CountingProxy {
  url: string;
  /** Requests seen so far, as "METHOD path". */
  readonly requests: string[];
  /** Sends what comes next to another service (one restarted on a new port, say). */
  retarget(target: string): void;
  close(): Promise<void>;
}

export async function countingProxy(target: string): Promise<CountingProxy> {
  let to = new URL(target);
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    // The service answers only to its own Host: say it, as a reverse proxy would.
    const forward = request(
      {
        host: to.hostname,
        port: to.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    retarget: (next) => {
      to = new URL(next);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: one the system just handed out and took back. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A second checkout, with a user config folder of its own (where `arbeit login` stores tokens). */
export interface Checkout {
  dir: string;
  config: string;
  env: Record<string, string>;
  cli(args: string[], options?: { env?: Record<string, string>; input?: string }): Promise<CliResult>;
  close(): void;
}

export function checkout(): Checkout {
  const work = tempDir("arbeit-remote-");
  const config = tempDir("arbeit-config-");
  const env = { XDG_CONFIG_HOME: config.dir };
  return {
    dir: work.dir,
    config: config.dir,
    env,
    cli: (args, options = {}) =>
      runCli(args, {
        cwd: work.dir,
        env: { ...env, ...options.env },
        ...(options.input === undefined ? {} : { input: options.input }),
      }),
    close() {
      work.cleanup();
      config.cleanup();
    },
  };
}

/** One CLI call under test/helpers/load-recorder.cjs: what it loaded (see test/cli/startup.test.ts). */
export function recordLoads(
  cli: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  record: string,
): Promise<number | null> {
  const recorder = new URL("../helpers/load-recorder.cjs", import.meta.url).pathname;
  const child = spawn(process.execPath, ["-r", recorder, cli, ...args], {
    cwd,
    env: { ...env, ARBEIT_LOAD_RECORD: record },
    stdio: "ignore",
  });
  return new Promise((resolve) => child.on("close", resolve));
}
