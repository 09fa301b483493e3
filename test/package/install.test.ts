import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { hostBinary, hostMissing } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { type FakeModel, type Reply, startFakeModel, toolHistory } from "../opencode/fake-model.js";
import {
  createSandbox,
  type OpencodeSandbox,
  opencodeConfig,
  runOpencode,
  seedConfigDir,
} from "../opencode/harness.js";

/**
 * The package as users get it: `npm pack` of this checkout, installed with npm into a clean
 * folder, then used as each kind of user would, on Node and under Bun (the runtime of OpenCode's
 * plugins): the `arbeit` command, the library, and the OpenCode plugin in the real binary.
 * The install reads the npm registry for what the npm cache lacks; where the registry cannot be
 * reached the suite skips, saying so (never in CI). better-sqlite3 installs from a prebuilt binary
 * where the machine can download one; this machine cannot, so it would compile it (about a minute
 * of both cores). The install is offered the binary the checkout's own install compiled instead,
 * as a local prebuild of the same version, Node ABI and platform (prebuild-install's
 * `local-prebuilds`, set in the app's .prebuild-installrc): what a user with a download gets. A different version resolved is compiled.
 */

const REPO = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const BUN = hostBinary("bun").path;
const noBun = requirement("Bun, for the packed package under Bun", hostBinary("bun").missing);
const noOpencode = requirement("the real opencode, for the packed plugin", hostMissing("opencode"));
const MANIFEST = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
const INSTALL_TIMEOUT_MS = 8 * 60_000;

// The user's own npm set-up (registry, cache, proxy, where node-gyp finds Node's headers) applies,
// as it would to their install: the install reuses what the checkout's install downloaded.
const npmEnv = () => ({
  ...process.env,
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
});

interface Installed {
  app: string;
  tarball: string;
  /** Paths in the tarball, without the leading `package/`. */
  files: string[];
  output: string;
}

function pack(into: string): { tarball: string; files: string[] } {
  // dist/ is built by `npm test` before the tests run; --ignore-scripts keeps pack from building again.
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", into], {
    cwd: REPO,
    encoding: "utf8",
    env: npmEnv(),
  });
  const [report] = JSON.parse(out);
  return { tarball: join(into, report.filename), files: report.files.map((file: { path: string }) => file.path) };
}

/**
 * A folder holding better-sqlite3's binary from the checkout's node_modules as prebuild-install's
 * tarball for this platform (`build/Release/better_sqlite3.node` inside), named as it looks for it.
 */
function localPrebuilds(into: string): string {
  const dir = join(into, "prebuilds");
  mkdirSync(dir, { recursive: true });
  const module = join(REPO, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(module, "package.json"), "utf8"));
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync("tar", ["-czf", join(dir, name), "-C", module, "build/Release/better_sqlite3.node"]);
  return dir;
}

function install(app: string, spec: string, prebuilds: string): { status: number | null; output: string } {
  // prebuild-install reads its settings from a .prebuild-installrc above the package it installs.
  writeFileSync(join(app, ".prebuild-installrc"), `local-prebuilds=${prebuilds}\n`);
  const result = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", spec], {
    cwd: app,
    encoding: "utf8",
    env: npmEnv(),
    timeout: INSTALL_TIMEOUT_MS,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}${result.error?.message ?? ""}` };
}

function newApp(root: string, name: string): string {
  const app = join(root, name);
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name, private: true, type: "module" })}\n`);
  return app;
}

/** Runs the installed `arbeit` (node_modules/.bin, as npx would) with `runtime`, JSON out. */
function arbeit(runtime: string, app: string, cwd: string, ...args: string[]) {
  const result = spawnSync(runtime, [join(app, "node_modules", ".bin", "arbeit"), ...args, "--json"], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: cwd },
  });
  const json = (() => {
    try {
      return JSON.parse(result.stdout);
    } catch {
      return undefined;
    }
  })();
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, json };
}

let installError: string | undefined;
const scratch = tempDir("arbeit-package-");
const installed: Installed = (() => {
  const { tarball, files } = pack(scratch.dir);
  const app = newApp(scratch.dir, "app");
  const { status, output } = install(app, tarball, localPrebuilds(scratch.dir));
  if (status !== 0) {
    // No registry (an offline machine) is the one failure that is not ours.
    if (/ENOTFOUND|EAI_AGAIN|ENOTCACHED|ECONNREFUSED|ETIMEDOUT/.test(output)) {
      installError = `npm could not reach the registry to install the packed package (${output.trim().split("\n").pop()})`;
    } else assert.fail(`npm install of the packed package failed (exit ${status}):\n${output}`);
  }
  return { app, tarball, files, output };
})();
const cannotInstall = requirement("the packed-package tests", installError);

describe("the packed package, installed with npm into a clean folder", { skip: cannotInstall }, () => {
  after(() => scratch.cleanup());

  it("carries every file its manifest names: the bin, the exports, the migrations, the prepare script and the dashboard's page", () => {
    const has = (path: string) => installed.files.includes(path.replace(/^\.\//, ""));
    for (const bin of Object.values(MANIFEST.bin as Record<string, string>)) assert.ok(has(bin), `bin ${bin}`);
    for (const [entry, targets] of Object.entries(MANIFEST.exports as Record<string, any>)) {
      const paths = typeof targets === "string" ? [targets] : Object.values(targets as Record<string, string>);
      for (const path of paths) assert.ok(has(path), `export ${entry}: ${path}`);
    }
    const prepare = /node (\S+)/.exec(MANIFEST.scripts.prepare)?.[1];
    assert.ok(prepare && has(prepare), `the prepare script's file ${prepare}`);
    assert.ok(
      installed.files.some((path) => path.startsWith("migrations/")),
      "migrations",
    );
    assert.ok(has("dist/cli/arbeit.cjs") && has("dist/cli/arbeit-core.cjs"), "the CLI bundles");
    assert.ok(has("dist/ui/assets/app.js") && has("dist/ui/assets/app.css"), "the dashboard's built page");
  });

  it("ships no V8 code cache: it is built for one Node version and processor, and written on first run", () => {
    assert.deepEqual(
      installed.files.filter((path) => path.includes(".cache")),
      [],
    );
  });

  it("installs on this Node without engine warnings, and without the optional peers (AI SDK, OpenCode types)", () => {
    assert.doesNotMatch(installed.output, /EBADENGINE/);
    const modules = join(installed.app, "node_modules");
    for (const name of ["ai", "@opencode-ai/plugin", "effect", "@ai-sdk/provider"]) {
      assert.ok(!existsSync(join(modules, name)), `${name} was installed`);
    }
  });

  it("gives a working `arbeit` command under Node", () => {
    const project = join(installed.app, "node-project");
    mkdirSync(project);
    assert.equal(arbeit(process.execPath, installed.app, project, "init").json?.success, true);
    const created = arbeit(process.execPath, installed.app, project, "task", "create", "Packed on Node");
    assert.equal(created.json?.success, true, created.stderr);
    const ready = arbeit(process.execPath, installed.app, project, "query", "ready");
    assert.deepEqual(
      ready.json.data.tasks.map((task: { title: string }) => task.title),
      ["Packed on Node"],
    );
    const version = spawnSync(join(installed.app, "node_modules", ".bin", "arbeit"), ["--version"], {
      encoding: "utf8",
    });
    assert.equal(version.stdout.trim(), MANIFEST.version);
  });

  it("gives a working `arbeit` command under Bun, on bun:sqlite", { skip: noBun }, () => {
    const project = join(installed.app, "bun-project");
    mkdirSync(project);
    assert.equal(arbeit(BUN, installed.app, project, "init").json?.success, true);
    const created = arbeit(BUN, installed.app, project, "task", "create", "Packed on Bun");
    assert.equal(created.json?.success, true, created.stderr);
    // The same file, read back by Node's driver.
    const ready = arbeit(process.execPath, installed.app, project, "query", "ready");
    assert.equal(ready.json.data.tasks[0].title, "Packed on Bun");
  });

  it("imports as a library under Node and Bun", { skip: noBun }, () => {
    const script = join(installed.app, "use.mjs");
    writeFileSync(
      script,
      [
        'import { mkdtempSync } from "node:fs";',
        'import { join } from "node:path";',
        'import { tmpdir } from "node:os";',
        'import { openArbeit } from "arbeit";',
        'const dir = mkdtempSync(join(tmpdir(), "arbeit-lib-"));',
        "const arbeit = await openArbeit({ cwd: dir, create: true });",
        'const created = await arbeit.createTask({ title: "From the library" }, { session: null, agent: "lib" });',
        "console.log(JSON.stringify(created.data.task.title));",
        "await arbeit.close();",
      ].join("\n"),
    );
    for (const runtime of [process.execPath, BUN]) {
      const result = spawnSync(runtime, [script], { cwd: installed.app, encoding: "utf8" });
      assert.equal(result.status, 0, `${runtime}: ${result.stderr}`);
      assert.equal(result.stdout.trim(), '"From the library"', runtime);
    }
  });

  describe("the OpenCode plugin from the installed package, in the real opencode binary", { skip: noOpencode }, () => {
    let sandbox: OpencodeSandbox;
    let model: FakeModel;

    before(async () => {
      sandbox = createSandbox();
      const project = sandbox.project;
      writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "oc-app", private: true })}\n`);
      // The packed install above, as this project's node_modules (a second install would only
      // repeat it).
      symlinkSync(join(installed.app, "node_modules"), join(project, "node_modules"), "dir");
      writeFileSync(join(project, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
      seedConfigDir(join(project, ".opencode"));
      const setup = arbeit(process.execPath, project, project, "setup", "opencode");
      assert.equal(setup.json?.success, true, setup.stderr);
    });

    after(async () => {
      await model?.close();
      sandbox?.cleanup();
    });

    it("serves arbeit_task_create to the model and writes the project's store", async () => {
      model = await startFakeModel((request): Reply => {
        if (!request.tools?.length) return { text: "Packed plugin" };
        const created = toolHistory(request).find((call) => call.name === "arbeit_task_create");
        if (!created) return { tool: "arbeit_task_create", args: { title: "Made through the packed plugin" } };
        return { text: `done ${JSON.parse(created.result).data.task.id}` };
      });
      const run = await runOpencode(sandbox, "Track a task", { port: model.port, timeoutMs: 150_000 });
      assert.equal(run.code, 0, `${run.stderr}\n${run.stdout.slice(-2000)}`);
      assert.deepEqual(model.errors, []);
      const ready = arbeit(process.execPath, sandbox.project, sandbox.project, "query", "ready");
      assert.equal(ready.json.data.tasks[0].title, "Made through the packed plugin");
      assert.match(
        readFileSync(join(sandbox.project, ".opencode", "plugin", "arbeit.js"), "utf8"),
        /from "arbeit\/opencode"/,
      );
    });
  });
});

describe("a checkout that was never built", () => {
  it("still gives an `arbeit` command when installed, which says to build it", () => {
    const { dir, cleanup } = tempDir("arbeit-unbuilt-");
    try {
      const checkout = join(dir, "arbeit");
      mkdirSync(join(checkout, "bin"), { recursive: true });
      copyFileSync(join(REPO, "package.json"), join(checkout, "package.json"));
      copyFileSync(join(REPO, "bin", "arbeit.cjs"), join(checkout, "bin", "arbeit.cjs"));
      const app = newApp(dir, "app");
      // A folder install links the checkout and runs none of its scripts (nor npm's registry).
      const result = spawnSync("npm", ["install", "--offline", "--ignore-scripts", checkout], {
        cwd: app,
        encoding: "utf8",
        env: npmEnv(),
      });
      assert.equal(result.status, 0, result.stderr);
      const run = spawnSync(join(app, "node_modules", ".bin", "arbeit"), ["--version"], { encoding: "utf8" });
      assert.equal(run.status, 1);
      assert.match(run.stderr, /has not been built: dist\/ is missing\.\nRun `npm install` in .*arbeit/);
    } finally {
      cleanup();
    }
  });
});
