import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/**
 * `arbeit` starts light: main.ts loads only the option parser and the command table; zod, the
 * tool catalogue and the database driver are imported when a command needs them. This follows
 * the static (non-type) imports from main.ts and lists every module that start-up loads.
 */
const CLI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli");
const STATIC_IMPORT = /^import\s+(?!type\b)[^;]*?from\s+"([^"]+)";/gms;

function staticImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, specifier] of readFileSync(file, "utf8").matchAll(STATIC_IMPORT)) {
    if (specifier!.startsWith(".")) staticImports(join(dirname(file), specifier!.replace(/\.js$/, ".ts")), seen);
    else seen.add(specifier!);
  }
  return seen;
}

describe("start-up", () => {
  it("loads neither zod, the catalogue, the service nor a database driver before a command runs", () => {
    const loaded = [...staticImports(join(CLI_DIR, "main.ts"))];
    for (const module of loaded) {
      assert.doesNotMatch(
        module,
        /^(zod|better-sqlite3|bun:sqlite|@modelcontextprotocol\/)/,
        `main.ts loads ${module}`,
      );
      assert.doesNotMatch(module, /\/(tools|service|store)\//, `main.ts loads ${module}`);
    }
    assert.ok(loaded.some((module) => module.endsWith("global-options.ts")));
  });

  it("leaves the dashboard's server out of the bundle every other command starts from", () => {
    // npm test builds dist/ first; `arbeit ui` loads its server from the full bundle only.
    const core = readFileSync(join(CLI_DIR, "../../dist/cli/arbeit-core.cjs"), "utf8");
    const full = readFileSync(join(CLI_DIR, "../../dist/cli/arbeit.cjs"), "utf8");
    assert.ok(full.includes("FORBIDDEN_HOST"), "the full bundle serves the dashboard");
    assert.ok(!core.includes("FORBIDDEN_HOST"), "the core bundle carries the dashboard's server");
  });
});
