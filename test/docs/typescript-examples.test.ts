/**
 * Every TypeScript example in the README and docs/*.md (a block fenced `ts` or `typescript`) is
 * typechecked against the built package and run, so the pages cannot drift from the library's
 * API. docs/contributing.md ("Writing docs") explains the convention to writers; in short:
 *
 * - A page's TypeScript blocks are one module, in order: a later block uses what an earlier one
 *   declared. `<!-- doc-test: new module -->` before a block starts a module of its own there
 *   (the blocks after it continue that one).
 * - `<!-- doc-test: typecheck only: <reason> -->` starts a module that is typechecked but not
 *   run (a real model's API, say); the test lists these.
 * - `import ... from "arbeit"` is this checkout's build (run `npm run build` first); the packages
 *   the examples import come from this checkout's node_modules, except `@ai-sdk/openai`, which
 *   is declared (not installed) for the typecheck only.
 * - A run starts in a fresh project that `arbeit init` set up, and every absolute path in a string
 *   (`"/repos/api"`, `"/data/tasks.db"`) is moved into that project. It must exit 0.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { after, describe, it } from "node:test";
import ts from "typescript";
import { tempDir } from "../helpers/temp.js";
import { parseDoc } from "./doc-blocks.js";
import { CHECKOUT, DOC_PAGES } from "./doc-project.js";

const LANGUAGES = new Set(["ts", "typescript"]);

interface Module {
  page: string;
  /** The file it is written to, relative to the temporary root. */
  file: string;
  /** 1-based page line of the module's first block (for messages). */
  line: number;
  source: string;
  /** Module line (0-based) -> page line (1-based). */
  lines: number[];
  /** Why it is not run, when it is typechecked only. */
  typecheckOnly?: string;
}

function modulesOf(page: string): Module[] {
  const parsed = parseDoc(readFileSync(join(CHECKOUT, page), "utf8"), page);
  const modules: Module[] = [];
  for (const block of parsed.blocks) {
    if (!LANGUAGES.has(block.language)) continue;
    const only = block.markers.find((marker) => marker.kind === "ts-typecheck-only");
    let current = modules.at(-1);
    if (!current || only || block.markers.some((marker) => marker.kind === "ts-module")) {
      const name = `${page.replace(/[^\w]+/g, "-")}-${modules.length + 1}.ts`;
      current = { page, file: name, line: block.line, source: "", lines: [] };
      if (only) current.typecheckOnly = only.reason;
      modules.push(current);
    }
    const body = block.content.split("\n");
    current.source += `${body.join("\n")}\n`;
    for (let i = 0; i < body.length; i++) current.lines.push(block.contentStart + i + 1);
  }
  // Every module is an ES module, with top-level await, even one that imports nothing.
  for (const module of modules) module.source += "export {};\n";
  return modules;
}

const MODULES = DOC_PAGES.flatMap(modulesOf);

/** A temporary root whose node_modules gives the examples this checkout's build and packages. */
function exampleRoot(): { dir: string; cleanup(): void } {
  const { dir, cleanup } = tempDir("arbeit-ts-docs-");
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "examples", type: "module", private: true })}\n`);
  const modules = join(dir, "node_modules");
  mkdirSync(join(modules, "@ai-sdk"), { recursive: true });
  symlinkSync(CHECKOUT, join(modules, "arbeit"), "dir");
  for (const name of readdirSync(join(CHECKOUT, "node_modules"))) {
    if (name === "@ai-sdk" || name.startsWith(".")) continue;
    symlinkSync(join(CHECKOUT, "node_modules", name), join(modules, name), "dir");
  }
  for (const name of readdirSync(join(CHECKOUT, "node_modules", "@ai-sdk")))
    symlinkSync(join(CHECKOUT, "node_modules", "@ai-sdk", name), join(modules, "@ai-sdk", name), "dir");
  // The one package an example imports that no test installs: declared, for the typecheck.
  writeFileSync(
    join(dir, "not-installed.d.ts"),
    'declare module "@ai-sdk/openai" {\n  export function openai(modelId: string): import("ai").LanguageModel;\n}\n',
  );
  return { dir, cleanup };
}

describe("the TypeScript examples in the docs", () => {
  const root = exampleRoot();
  after(() => root.cleanup());

  it("finds the examples of the library, AI SDK and MCP pages", () => {
    const pages = new Set(MODULES.map((module) => module.page));
    for (const page of ["docs/library.md", "docs/ai-sdk.md"]) assert.ok(pages.has(page), `${page} has examples`);
    assert.ok(
      MODULES.some((module) => module.typecheckOnly === undefined),
      "some examples run",
    );
  });

  it("typecheck against the built package (npm run build first)", () => {
    assert.ok(existsSync(join(CHECKOUT, "dist", "index.d.ts")), "dist/index.d.ts is missing: run `npm run build`");
    for (const module of MODULES) writeFileSync(join(root.dir, module.file), module.source);
    const program = ts.createProgram({
      rootNames: [...MODULES.map((module) => join(root.dir, module.file)), join(root.dir, "not-installed.d.ts")],
      options: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ["lib.es2023.d.ts"],
        types: ["node"],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      const module = MODULES.find((m) => diagnostic.file && join(root.dir, m.file) === diagnostic.file.fileName);
      if (!module || diagnostic.start === undefined) return text;
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
      return `${module.page}:${module.lines[line] ?? module.line}: ${text}`;
    });
    assert.deepEqual(problems, []);
  });

  it("lists the examples typechecked but not run, each saying why", (t) => {
    const only = MODULES.filter((module) => module.typecheckOnly !== undefined);
    for (const module of only) t.diagnostic(`typecheck only: ${module.page}:${module.line}: ${module.typecheckOnly}`);
    for (const module of only) assert.ok(module.typecheckOnly!.length >= 10, `${module.page}:${module.line}: say why`);
  });

  for (const module of MODULES.filter((m) => m.typecheckOnly === undefined)) {
    it(`${module.page}:${module.line} runs`, () => {
      const run = join(root.dir, `run-${module.file.replace(/\.ts$/, "")}`);
      rmSync(run, { recursive: true, force: true });
      const project = join(run, "project");
      mkdirSync(project, { recursive: true });
      const init = spawnSync(process.execPath, [join(CHECKOUT, "dist", "cli", "main.js"), "init"], {
        cwd: project,
        encoding: "utf8",
      });
      assert.equal(init.status, 0, init.stderr);
      // Absolute paths in strings go below the run's folder, which exists as the example expects.
      const source = module.source.replace(/(["'`])\/(?=[A-Za-z])([^"'`]*)\1/g, (_, quote: string, path: string) => {
        const moved = join(project, path);
        mkdirSync(extname(moved) ? dirname(moved) : moved, { recursive: true });
        return `${quote}${moved}${quote}`;
      });
      const file = join(root.dir, module.file.replace(/\.ts$/, ".run.ts"));
      writeFileSync(file, source);
      const result = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), file], {
        cwd: project,
        encoding: "utf8",
        env: { ...process.env, NODE_NO_WARNINGS: "1" },
        timeout: 120_000,
      });
      assert.equal(result.status, 0, `${module.page}:${module.line} failed:\n${result.stderr}\n${result.stdout}`);
    });
  }
});
