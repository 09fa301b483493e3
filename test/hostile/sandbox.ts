import { spawnSync } from "node:child_process";
import { CLI, type CliResult } from "../helpers/cli.js";
import { filePermissionsMissing, withFilePermissions } from "../helpers/file-permissions.js";
import { requirement } from "../helpers/requirements.js";

/**
 * Odd environments made for real, not simulated: a small or read-only file system is a tmpfs
 * mounted in a private mount namespace (`unshare -rm`, which needs no root where user namespaces
 * are allowed), and a file the user may not read or write is one whose mode says so, with root's
 * power to ignore modes taken away (test/helpers/file-permissions.ts).
 */

function works(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: "ignore" }).status === 0;
}

/** The `skip` option for tests that mount file systems. */
export function mountSkip(): string | false {
  return requirement(
    "the file system tests (read-only and full disks)",
    works("unshare", ["-rm", "true"])
      ? undefined
      : "`unshare -rm` cannot make a private mount namespace here (util-linux, user namespaces)",
  );
}

/** The `skip` option for tests that need file permissions to hold for the CLI. */
export function filePermissionsSkip(): string | false {
  return requirement("the file permission tests", filePermissionsMissing());
}

function parse(result: ReturnType<typeof spawnSync>): CliResult {
  const stdout = String(result.stdout ?? "");
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code: result.status ?? 1, stdout, stderr: String(result.stderr ?? ""), json };
}

const cleanEnv = (env: Record<string, string>) => {
  const out: Record<string, string> = { ...(process.env as Record<string, string>), ...env };
  for (const key of ["ARBEIT_DB", "ARBEIT_SESSION", "ARBEIT_AGENT", "ARBEIT_LIST"]) if (!env[key]) delete out[key];
  return out;
};

export interface MountOptions {
  /** tmpfs size, e.g. "64k". */
  size: string;
  /** Copied into the file system before it is used. */
  seed?: string;
  /** Remount read-only after seeding. */
  readOnly?: boolean;
}

/** A CLI call (its arguments), or a shell step between calls (e.g. to fill the disk). */
export type MountStep = string[] | { shell: string };

/**
 * Runs each of `steps` in turn inside one private tmpfs at `mountPoint`, with the
 * mount as working directory; returns their results. The mount is gone when this returns.
 */
export function cliInMount(
  mountPoint: string,
  options: MountOptions,
  steps: MountStep[],
  env: Record<string, string> = {},
): { results: CliResult[]; listing: string } {
  const separator = "\u001e--arbeit-call--\u001e";
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const script = [
    "set -e",
    `MNT=${quote(mountPoint)}`,
    `mount -t tmpfs -o size=${options.size} tmpfs "$MNT"`,
    options.seed ? `cp -a ${quote(options.seed)}/. "$MNT"/` : "",
    options.readOnly ? `mount -o remount,ro "$MNT"` : "",
    `cd "$MNT"`,
    "set +e",
    ...steps.map((args) =>
      !Array.isArray(args)
        ? args.shell
        : `${[process.execPath, CLI, ...args].map(quote).join(" ")} </dev/null >"$OUT.out" 2>"$OUT.err"; code=$?; ` +
          `cat "$OUT.out"; printf '${separator}%s${separator}' "$code"; cat "$OUT.err"; printf '${separator}'`,
    ),
    `rm -f "$OUT.out" "$OUT.err"; printf '\\n'; find . -mindepth 1 | sort`,
  ].join("\n");
  const result = spawnSync("unshare", ["-rm", "sh", "-c", script], {
    env: { ...cleanEnv(env), OUT: `/tmp/arbeit-mount-${process.pid}-${Date.now()}` },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0 && result.stdout === "") throw new Error(`the sandbox failed: ${result.stderr}`);
  const parts = result.stdout.split(separator);
  const results: CliResult[] = [];
  for (let i = 0; i + 3 < parts.length; i += 3) {
    results.push(
      parse({ status: Number(parts[i + 1]), stdout: parts[i], stderr: parts[i + 2] } as ReturnType<typeof spawnSync>),
    );
  }
  return { results, listing: parts.at(-1)!.trim() };
}

/** Runs the CLI in `cwd` as a process that file permissions apply to, even when the tests run as root. */
export function cliUnderFilePermissions(cwd: string, args: string[], env: Record<string, string> = {}): CliResult {
  const [command, commandArgs] = withFilePermissions(process.execPath, [CLI, ...args]);
  return parse(spawnSync(command, commandArgs, { cwd, env: cleanEnv(env), encoding: "utf8" }));
}
