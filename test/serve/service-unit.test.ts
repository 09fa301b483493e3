import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The systemd unit docs/team.md offers (contrib/systemd/arbeit.service): systemd checks it, and
 * its ExecStart, run the way the unit says (its user, umask, working folder, EnvironmentFile and
 * stop signal), serves. The machine runs no systemd as PID 1, so the unit is not started by
 * systemd itself: `systemd-analyze verify` checks it, and the test plays the service manager's
 * part with setpriv, as an unprivileged user ("nobody" stands in for the unit's `arbeit`).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const UNIT = join(ROOT, "contrib", "systemd", "arbeit.service");
const NOBODY = 65534;

const missing = (command: string) => {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return false;
  } catch {
    return `${command} is not installed`;
  }
};
const asRoot = process.getuid?.() === 0 ? false : "needs root to switch to another user";

/**
 * This checkout's built CLI, copied where any user may run it (as an install in /usr/local is):
 * the checkout itself may sit in a folder only root can enter (CI's fresh clone does). The CLI is
 * one bundle; outside it stay only the SQLite addon and what loads it.
 */
function installForAnyone(into: string): string {
  const copy = (from: string) => cpSync(join(ROOT, from), join(into, from), { recursive: true, dereference: true });
  for (const part of ["package.json", "dist", "migrations"]) copy(part);
  for (const part of ["bindings", "file-uri-to-path", "better-sqlite3/package.json", "better-sqlite3/lib"])
    copy(join("node_modules", part));
  copy(join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"));
  return join(into, "dist", "cli", "main.js");
}

/** The [Service] settings of the unit, each key's values in order. */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = "";
  for (const line of text.split("\n")) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header) section = header[1]!;
    else if (section === "Service" && /^\w+=/.test(line)) {
      const at = line.indexOf("=");
      settings.set(line.slice(0, at), [...(settings.get(line.slice(0, at)) ?? []), line.slice(at + 1)]);
    }
  }
  return settings;
}

const one = (settings: Map<string, string[]>, key: string) => {
  const values = settings.get(key);
  assert.equal(values?.length, 1, `the unit sets ${key} once`);
  return values[0]!;
};

describe("the systemd unit for arbeit serve", () => {
  const text = readFileSync(UNIT, "utf8");
  const settings = serviceSettings(text);
  const work = tempDir("arbeit-unit-");
  /** The unit with its ExecStart binary replaced by one that runs this checkout's CLI. */
  const installed = (unit: string) => {
    const shim = join(work.dir, "arbeit");
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
    const file = join(work.dir, "arbeit.service");
    writeFileSync(file, unit.replace(/^ExecStart=\S+/m, `ExecStart=${shim}`));
    return file;
  };
  const verify = (file: string) =>
    new Promise<{ code: number; output: string }>((resolve) =>
      execFile("systemd-analyze", ["verify", file], (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
      ),
    );
  after(() => work.cleanup());

  it("passes systemd-analyze verify without a warning (a misspelt setting does not)", {
    skip: missing("systemd-analyze"),
  }, async () => {
    const good = await verify(installed(text));
    assert.deepEqual(good, { code: 0, output: "" });
    const misspelt = await verify(installed(text.replace("ProtectSystem=strict", "ProtectSystm=strict")));
    assert.match(misspelt.output, /Unknown key 'ProtectSystm'/);
  });

  it("runs as its own user, hardened, with its settings from the EnvironmentFile", () => {
    assert.equal(one(settings, "User"), "arbeit");
    assert.equal(one(settings, "NoNewPrivileges"), "yes");
    assert.equal(one(settings, "ProtectSystem"), "strict");
    assert.equal(one(settings, "CapabilityBoundingSet"), "");
    assert.equal(one(settings, "KillSignal"), "SIGTERM");
    assert.match(one(settings, "ReadWritePaths"), /^\/var\/lib\/arbeit$/);
    assert.ok(one(settings, "WorkingDirectory").startsWith(one(settings, "ReadWritePaths")));
    assert.equal(one(settings, "EnvironmentFile"), "/etc/arbeit/arbeit.env");
  });

  describe("its ExecStart, started as the unit says by an unprivileged user", {
    skip: asRoot || missing("setpriv"),
  }, () => {
    const root = join(work.dir, "var-lib-arbeit");
    const project = join(root, "project");
    const envFile = join(work.dir, "arbeit.env");
    /** A command as the unit's user: its uid and gid, no groups, no capabilities, no new privileges, its umask. */
    const asUnit = (argv: string[]) => [
      ...["--reuid", String(NOBODY), "--regid", String(NOBODY), "--clear-groups"],
      ...["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"],
      ...["sh", "-c", `umask ${one(settings, "UMask")} && exec "$0" "$@"`, ...argv],
    ];
    /** ExecStart as written, but for the binary (this checkout's CLI) and the port (any free one). */
    const execStart = () => {
      const [binary, ...args] = one(settings, "ExecStart").split(/\s+/);
      assert.equal(binary, "/usr/local/bin/arbeit");
      const port = args.indexOf("--port");
      assert.ok(port >= 0, "ExecStart names its port");
      args[port + 1] = "0";
      return [process.execPath, cli, ...args];
    };
    const env = () => {
      // What systemd gives a service: a plain PATH, the user's HOME, and the EnvironmentFile's lines.
      const fromFile = Object.fromEntries(
        readFileSync(envFile, "utf8")
          .split("\n")
          .filter((line) => /^[A-Z_]+=/.test(line))
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
      return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root, ...fromFile };
    };
    let cli: string;
    const run = (args: string[]) =>
      execFileSync("setpriv", asUnit([process.execPath, cli, ...args]), { cwd: project, env: env(), encoding: "utf8" });
    let secret: string;

    before(() => {
      // /var/lib/arbeit belongs to the service's user; the settings file is root's (systemd reads it).
      chmodSync(work.dir, 0o755);
      cli = installForAnyone(join(work.dir, "usr-local-lib-arbeit"));
      mkdirSync(project, { recursive: true });
      chownSync(root, NOBODY, NOBODY);
      chownSync(project, NOBODY, NOBODY);
      writeFileSync(envFile, "# settings of arbeit serve\nARBEIT_LOG_FORMAT=json\n", { mode: 0o600 });
      run(["init", "--json"]);
      secret = JSON.parse(run(["token", "create", "--agent", "ci", "--json"])).data.secret;
    });

    it("serves, as that user, writes its store for that user alone, logs JSON, and stops on SIGTERM with 0", async () => {
      const child = spawn("setpriv", asUnit(execStart()), {
        cwd: project,
        env: env(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = "";
          child.stdout.setEncoding("utf8").on("data", (chunk) => {
            out += chunk;
            if (out.includes("\n")) resolve(out.split("\n")[0]!);
          });
          child.once("exit", () => reject(new Error(`exited before its URL: ${stderr}`)));
        });
        const health = await fetch(`${url}/healthz`);
        assert.equal(health.status, 200);
        const call = await fetch(`${url}/api/call`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
          body: JSON.stringify({ tool: "arbeit_task_create", args: { title: "From the unit" } }),
        });
        assert.equal(((await call.json()) as any).success, true);
        // setpriv and sh exec: the service is the process systemd would watch.
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
        assert.match(status, new RegExp(`^Uid:\\t${NOBODY}\\t${NOBODY}\\t${NOBODY}\\t${NOBODY}$`, "m"));
        assert.match(status, /^NoNewPrivs:\t1$/m);
        assert.match(status, /^CapEff:\t0{16}$/m);
        const store = statSync(join(project, ".arbeit", "arbeit.db"));
        assert.deepEqual([store.uid, store.mode & 0o777], [NOBODY, 0o600]);
        for (let waited = 0; !stderr.includes('"tool":"arbeit_task_create"') && waited < 5_000; waited += 20)
          await new Promise((resolve) => setTimeout(resolve, 20));
        const line = stderr.split("\n").find((row) => row.includes('"tool":"arbeit_task_create"'))!;
        assert.deepEqual(
          [JSON.parse(line).token, JSON.parse(line).status, JSON.parse(line).client],
          ["ci", 200, "127.0.0.1"],
        );
      } finally {
        child.kill(one(settings, "KillSignal") as NodeJS.Signals);
      }
      assert.equal(await exited, 0);
    });
  });
});
