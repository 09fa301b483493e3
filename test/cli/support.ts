import assert from "node:assert/strict";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * A real temporary directory driven through the built `arbeit` binary, as a user's shell would.
 * `run` returns whatever happened; `ok` insists on exit 0 and a success envelope and returns its
 * data, so a test reads as the sequence of commands it specifies.
 */
export interface CliProject {
  dir: string;
  run(args: string[], options?: RunOptions): Promise<CliResult>;
  ok(args: string[], options?: RunOptions): Promise<any>;
  cleanup(): void;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  input?: string;
}

export async function cliProject(options: { init?: boolean } = {}): Promise<CliProject> {
  const { dir, cleanup } = tempDir("arbeit-cli-");
  const run = (args: string[], opts: RunOptions = {}) =>
    runCli(args, { cwd: opts.cwd ?? dir, ...(opts.env ? { env: opts.env } : {}), input: opts.input ?? "" });
  const ok = async (args: string[], opts: RunOptions = {}) => {
    const result = await run(args, opts);
    assertSuccess(result, args);
    return result.json.data;
  };
  if (options.init ?? true) await ok(["init"]);
  return { dir, run, ok, cleanup };
}

export function assertSuccess(result: CliResult, args: readonly string[] = []): void {
  assert.equal(
    result.code,
    0,
    `arbeit ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
  );
  assert.equal(result.json?.success, true, `arbeit ${args.join(" ")} printed ${result.stdout}`);
}

/** A tool error: exit 1 and the failure envelope, with its code, on stdout. */
export function assertToolError(result: CliResult, code: string): void {
  assert.equal(
    result.code,
    1,
    `expected exit 1, got ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
  );
  assert.equal(result.json?.success, false, `expected a failure envelope on stdout, got ${result.stdout}`);
  assert.equal(result.json.error.code, code);
  assert.ok(result.json.error.message.length > 0);
}

/** A usage error of the CLI itself: exit 2, nothing on stdout, a message on stderr. */
export function assertUsageError(result: CliResult, message: RegExp): void {
  assert.equal(
    result.code,
    2,
    `expected exit 2, got ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
  );
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /^arbeit: /);
  assert.match(result.stderr, message);
}
