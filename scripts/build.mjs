#!/usr/bin/env node
// `npm run build`: the library with tsc (dist/, with declarations), then the CLI as one bundle.
//
// Why the CLI is bundled (docs/benchmarks.md, "CLI start-up"): an agent's hook or script runs
// `arbeit` once per call, so its start-up is paid every time. Loading ~150 ES modules (zod alone
// is ~100) cost about 3x the CPU of `node -e 0`. Here esbuild joins the CLI and its dependencies
// into dist/cli/arbeit.cjs; dist/cli/main.js (a CommonJS loader, which starts faster than an ES
// module entry) runs it through V8's code cache, so later calls skip parsing and compiling.
// Behaviour is the same code, bundled; only the SQLite addon, pg and bun:sqlite stay outside.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";
import { buildUi } from "./build-ui.mjs";

const root = new URL("..", import.meta.url).pathname;
const cliDir = join(root, "dist", "cli");

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  return result.status ?? 1;
}

// In ES modules `import.meta.url` locates files next to the code (migrations, package.json).
// In the bundle each use is given the URL its module has in dist/, so those paths still hold.
const importMetaUrl = {
  name: "import-meta-url",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.url")) return undefined;
      const asInDist = relative(join(root, "src"), args.path).replaceAll("\\", "/").replace(/\.ts$/, ".js");
      return {
        contents: source.replaceAll("import.meta.url", `__arbeitUrl(${JSON.stringify(asInDist)})`),
        loader: "ts",
      };
    });
  },
};

// Two parts of zod that Arbeit never uses cost every CLI call: every translation of its messages
// (`z.locales`, ~300 kB, a third of the core bundle; zod speaks English unless told otherwise, and
// Arbeit never tells it otherwise), and `z.fromJSONSchema`, whose module copies all of zod's
// exports into an object as it loads. The CLI's bundles keep English and leave the other out.
const ZOD_UNUSED = {
  "../locales/index.js": 'export { default as en } from "./en.js";',
  "./from-json-schema.js":
    "export function fromJSONSchema() { throw new Error('internal: z.fromJSONSchema is left out of the CLI bundle'); }",
};
const trimZod = {
  name: "trim-zod",
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/(locales\/index|from-json-schema)\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), args.path), namespace: "zod-trimmed", pluginData: args.path }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-trimmed" }, (args) => ({
      contents: ZOD_UNUSED[args.pluginData],
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

// Heavy commands (ExtraCommand.heavy in src/cli/extra-commands.ts) are left out of the core
// bundle: there their modules are stubs, and the loader hands such calls to the full bundle.
function heavyCommandModules() {
  const source = readFileSync(join(root, "src", "cli", "extra-commands.ts"), "utf8");
  const modules = [...source.matchAll(/heavy: true,[^}]*?import\("\.\/([\w-]+)\.js"\)/g)].map((m) => m[1]);
  const declared = (source.match(/heavy: true,/g) ?? []).length;
  if (modules.length === 0 || modules.length !== declared) {
    throw new Error(`build: found ${modules.length} heavy command modules for ${declared} heavy commands.`);
  }
  return modules;
}

const stubHeavyCommands = (modules) => ({
  name: "stub-heavy-commands",
  setup(b) {
    const filter = new RegExp(`^\\./(${modules.join("|")})\\.js$`);
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: "heavy-stub" }));
    b.onLoad({ filter: /.*/, namespace: "heavy-stub" }, () => ({
      contents: "export async function run() { throw new Error('internal: a heavy command reached the core bundle'); }",
      loader: "js",
    }));
  },
});

async function bundleCli(heavyStubs) {
  const result = await build({
    entryPoints: [join(root, "src", "cli", "main.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    write: false,
    charset: "ascii",
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    // Native or runtime-provided drivers load from node_modules (or Bun) as before.
    // better-sqlite3's JavaScript is bundled (loading its dozen files cost milliseconds); its
    // compiled addon is loaded from node_modules by path (src/store/sqlite/driver-node.ts).
    external: ["bun:sqlite", "pg", "pg-native", "*.node"],
    // import() of a bundled module becomes a lazy init; of an external one, require().
    supported: { "dynamic-import": false },
    plugins: heavyStubs ? [importMetaUrl, trimZod, stubHeavyCommands(heavyStubs)] : [importMetaUrl, trimZod],
    logLevel: "warning",
  });
  const code = result.outputFiles[0].text.replace(/^#!.*\n/, "");
  if (Buffer.byteLength(code) !== code.length) {
    throw new Error("The CLI bundle is not pure ASCII; the loader reads it as latin1.");
  }
  if (/\bimport\.meta\b/.test(code)) throw new Error("The CLI bundle still uses import.meta, which CommonJS lacks.");
  // The loader calls this function with the CommonJS wrapper's arguments.
  return `(function (exports, require, module, __filename, __dirname, __arbeitUrl, __arbeitFull) {${code}\n})`;
}

function loader(hashes) {
  return `#!/usr/bin/env node
"use strict";
// Generated by scripts/build.mjs: runs the bundled CLI through V8's code cache. Every call starts
// in the lean core bundle (arbeit-core.cjs); heavy commands (MCP, hooks, set-up, maintenance)
// continue in the full one (arbeit.cjs). A cache is written on a bundle's first run (or after a
// Node upgrade) when this folder is writable; without it the CLI works the same, only slower.
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");
const { Script } = require("node:vm");
const hashes = ${JSON.stringify(hashes)};
// V8's code cache; Bun (JavaScriptCore) has none.
const cacheable = process.versions.bun === undefined;
// V8 rejects a cache written under other V8 flags (--max-old-space-size, say, on the command line
// or in NODE_OPTIONS), and the rejecting call writes its own over it: calls with and without such
// flags would each compile the whole bundle and rewrite the cache. Each set of flags has its own.
function flagsKey() {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join("\\0");
  if (flags === "") return "";
  let hash = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193);
  return \`-f\${(hash >>> 0).toString(16)}\`;
}
function run(name, full) {
  const bundle = join(__dirname, name + ".cjs");
  const cacheFile = join(
    __dirname,
    ".cache",
    \`\${name}-\${hashes[name]}-\${process.versions.v8}-\${process.arch}\${flagsKey()}.bin\`,
  );
  let cachedData;
  try {
    if (cacheable) cachedData = readFileSync(cacheFile);
  } catch {}
  const script = new Script(readFileSync(bundle, "latin1"), { filename: bundle, cachedData });
  if (cacheable && (cachedData === undefined || script.cachedDataRejected)) {
    process.once("exit", () => {
      try {
        mkdirSync(join(__dirname, ".cache"), { recursive: true });
        const temporary = \`\${cacheFile}.\${process.pid}.tmp\`;
        writeFileSync(temporary, script.createCachedData());
        renameSync(temporary, cacheFile);
      } catch {}
    });
  }
  const base = pathToFileURL(bundle);
  script.runInThisContext()(exports, require, module, bundle, __dirname, (path) => new URL(\`../\${path}\`, base).href, full);
}
run("arbeit-core", () => run("arbeit", undefined));
`;
}

let status = run(process.execPath, [
  join(root, "node_modules", "typescript", "bin", "tsc"),
  "-p",
  "tsconfig.build.json",
]);
// The dashboard's page (scripts/build-ui.mjs): dist/ui/assets/app.js and app.css.
await buildUi(root);

const full = await bundleCli(undefined);
const core = await bundleCli(heavyCommandModules());
const hashOf = (code) => createHash("sha256").update(code).digest("hex").slice(0, 16);
// dist/cli holds the bundles only: tsc's per-file output (if any) and old caches go.
rmSync(cliDir, { recursive: true, force: true });
mkdirSync(cliDir, { recursive: true });
writeFileSync(join(cliDir, "arbeit.cjs"), full);
writeFileSync(join(cliDir, "arbeit-core.cjs"), core);
writeFileSync(join(cliDir, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
writeFileSync(join(cliDir, "main.js"), loader({ arbeit: hashOf(full), "arbeit-core": hashOf(core) }));
chmodSync(join(cliDir, "main.js"), 0o755);

// Smoke-test the bundle and leave a warm code cache: the run that creates the cache is a
// typical one (open a store, answer a query), so the functions it compiles are the ones cached.
const scratch = mkdtempSync(join(tmpdir(), "arbeit-build-"));
try {
  const db = join(scratch, "arbeit.db");
  const main = join(cliDir, "main.js");
  const env = { ...process.env };
  delete env.ARBEIT_DB;
  const quiet = { cwd: scratch, stdio: ["ignore", "ignore", "inherit"], env };
  // Each bundle's cache is written by its first run: the core's by a typical call (open a store,
  // answer a query), the full one's by a maintenance check.
  const steps = [
    ["init", "--db", db],
    ["query", "ready", "--db", db],
    ["doctor", "--db", db],
  ];
  for (const [i, args] of steps.entries()) {
    if (i === 1) rmSync(join(cliDir, ".cache"), { recursive: true, force: true });
    const result = spawnSync(process.execPath, [main, ...args], quiet);
    if (result.status !== 0) {
      process.stderr.write(`build: the bundled CLI failed on \`arbeit ${args.join(" ")}\` (exit ${result.status}).\n`);
      status ||= 1;
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(status);
