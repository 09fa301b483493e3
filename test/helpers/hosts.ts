import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { installOnDemand } from "./on-demand.js";

/**
 * The real host binaries the end-to-end tests run: Claude Code, OpenCode and Bun. They are not
 * dependencies of the checkout (together they weigh about 900 MB): each is installed on demand,
 * at the exact version pinned here and nowhere else, into the test cache (on-demand.ts), once.
 * `npm test` installs them before the tests; `.ci/run` before that (scripts/host-binaries.ts),
 * so CI pays for them once, visibly. ARBEIT_TEST_CLAUDE, ARBEIT_TEST_OPENCODE and
 * ARBEIT_TEST_BUN name another build of a binary instead.
 */
export const HOSTS = {
  claude: { package: "@anthropic-ai/claude-code", version: "2.1.197", env: "ARBEIT_TEST_CLAUDE" },
  opencode: { package: "opencode-ai", version: "1.18.33", env: "ARBEIT_TEST_OPENCODE" },
  bun: { package: "bun", version: "1.4.5", env: "ARBEIT_TEST_BUN" },
} as const;

export type Host = keyof typeof HOSTS;

export interface HostBinary {
  /** The executable (it may not exist when `missing` is set). */
  path: string;
  /** Set when the binary could not be installed or found: why. */
  missing?: string;
}

/** A real binary is megabytes; a package whose install script did not run may hold a stub. */
const isBinary = (path: string) => existsSync(path) && statSync(path).size > 1_000_000;

/**
 * Where each package keeps its binary: the package's own `bin` once its install script linked
 * the platform build over it, otherwise the platform package's.
 */
function candidates(host: Host, modules: string): string[] {
  const platform = `${process.platform}-${process.arch}`;
  switch (host) {
    case "claude":
      return [
        join(modules, "@anthropic-ai", `claude-code-${platform}`, "claude"),
        join(modules, "@anthropic-ai", `claude-code-${platform}-musl`, "claude"),
        join(modules, "@anthropic-ai", "claude-code", "bin", "claude.exe"),
      ];
    case "opencode":
      return [
        join(modules, "opencode-ai", "bin", "opencode.exe"),
        ...["", "-baseline", "-musl", "-baseline-musl"].map((variant) =>
          join(modules, `opencode-${platform}${variant}`, "bin", "opencode"),
        ),
      ];
    case "bun":
      return [
        join(modules, "bun", "bin", "bun.exe"),
        ...["", "-baseline", "-musl", "-musl-baseline"].map((variant) =>
          join(modules, "@oven", `bun-${platform}${variant}`, "bin", "bun"),
        ),
      ];
  }
}

const found = new Map<Host, HostBinary>();

/** The host's binary, installed into the test cache first if it is not there yet. */
export function hostBinary(host: Host): HostBinary {
  const known = found.get(host);
  if (known) return known;
  const { package: name, version, env } = HOSTS[host];
  let result: HostBinary;
  const override = process.env[env];
  if (override) {
    result = existsSync(override) ? { path: override } : { path: override, missing: `${env}=${override} is missing` };
  } else {
    const tool = installOnDemand(name, version, `${host}-${version}`);
    const modules = join(tool.dir, ...name.split("/").map(() => ".."));
    const paths = candidates(host, modules);
    const path = paths.find(isBinary) ?? paths[0]!;
    result = tool.missing
      ? { path, missing: tool.missing }
      : isBinary(path)
        ? { path }
        : { path, missing: `${name}@${version} was installed, but none of ${paths.join(", ")} is its binary` };
  }
  found.set(host, result);
  return result;
}

/** Why the host's binary cannot run here (install failed, or `--version` fails), or undefined. */
export function hostMissing(host: Host): string | undefined {
  const binary = hostBinary(host);
  if (binary.missing) return binary.missing;
  try {
    execFileSync(binary.path, ["--version"], {
      timeout: 30_000,
      stdio: "pipe",
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    });
    return undefined;
  } catch (error) {
    return `the ${host} binary ${binary.path} does not run here: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * The command that runs a Node script needing Node 22 (fs.globSync, say): this Node when it is 22
 * or newer, otherwise Bun (hostBinary("bun").missing says why it cannot).
 */
export function node22Runner(): HostBinary {
  const major = Number(process.versions.node.split(".")[0]);
  return major >= 22 ? { path: process.execPath } : hostBinary("bun");
}
