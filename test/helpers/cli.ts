import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built CLI, exactly as `npx arbeit` runs it (npm test builds it first). */
export const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** Settings of the outer environment that must not reach a CLI a test starts, unless it gives them. */
export const ARBEIT_SETTINGS = [
  "ARBEIT_DB",
  "ARBEIT_SESSION",
  "ARBEIT_AGENT",
  "ARBEIT_LIST",
  "ARBEIT_DATABASE_URL",
  "ARBEIT_DATABASE_SCHEMA",
  "ARBEIT_URL",
  "ARBEIT_TOKEN",
  "ARBEIT_REQUEST_ID",
  "ARBEIT_HEARTBEAT_SECONDS",
  "ARBEIT_LOG_FORMAT",
] as const;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as the JSON envelope, when it is one. */
  json: any;
}

/**
 * The command that runs the built CLI with `args`; with `umask`, a shell sets that umask first (the
 * files a process creates take their mode from it).
 */
export function cliCommand(args: string[], umask?: number, cli = CLI): { command: string; args: string[] } {
  if (umask === undefined) return { command: process.execPath, args: [cli, ...args] };
  const shell = `umask ${umask.toString(8).padStart(3, "0")} && exec "$0" "$@"`;
  return { command: "sh", args: ["-c", shell, process.execPath, cli, ...args] };
}

export function runCli(
  args: string[],
  options: {
    cwd: string;
    env?: Record<string, string>;
    input?: string | Buffer;
    umask?: number;
    /** Another built CLI to run (an earlier release's, test/helpers/previous-release.ts); this checkout's by default. */
    cli?: string;
  },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...options.env };
    for (const key of ARBEIT_SETTINGS) if (!options.env?.[key]) delete env[key];
    const command = cliCommand(args, options.umask, options.cli);
    const child = spawn(command.command, command.args, { cwd: options.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    // Decode as a stream: a multi-byte character split across two chunks must not turn into U+FFFD.
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
    child.stdin.end(options.input ?? "");
  });
}
