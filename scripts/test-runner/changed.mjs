// `npm test -- --changed`: the test files that could notice what a change touched. A test file is
// chosen when it changed itself, or when it imports (directly or through other modules) a file
// that changed. The graph is read from the source text: static and dynamic imports with a
// relative specifier, and paths into the built dist/ (a test that spawns dist/cli/main.js depends
// on src/cli/main.ts and all it imports).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SOURCE = /\.(ts|tsx|mts|mjs|js|cjs)$/;
// Changes every test depends on without importing them: the dependency tree, the compiler's
// settings, the build.
const EVERYTHING = /^(package\.json|package-lock\.json|tsconfig[^/]*\.json|scripts\/build[^/]*\.mjs)$/;

function git(root, args) {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return undefined;
  }
}

/**
 * What changed: the commits since this branch left main (or since HEAD when there is no main),
 * the changes not yet committed, and files git does not track yet. Paths relative to `root`.
 */
export function changedFiles(root) {
  const base = git(root, ["merge-base", "HEAD", "main"])?.trim() || "HEAD";
  const changed = new Set();
  for (const list of [
    git(root, ["diff", "--name-only", base]),
    git(root, ["ls-files", "--others", "--exclude-standard"]),
  ]) {
    for (const line of (list ?? "").split("\n")) if (line) changed.add(line);
  }
  return [...changed].sort();
}

function sourceFiles(root, dir, out = []) {
  const full = join(root, dir);
  if (!existsSync(full)) return out;
  for (const name of readdirSync(full)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) sourceFiles(root, path, out);
    else if (SOURCE.test(name)) out.push(path);
  }
  return out;
}

/** The file a relative specifier names: `./x.js` is `./x.ts` in the source. */
function resolveSpecifier(root, from, specifier) {
  const base = resolve(root, dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|cjs)$/, "");
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate);
  }
  return undefined;
}

/** The files `file` depends on, as far as its text shows. */
function dependencies(root, file, text) {
  const out = new Set();
  const specifiers = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of text.matchAll(specifiers)) {
    const target = resolveSpecifier(root, file, match[1]);
    if (target) out.add(target);
  }
  for (const match of text.matchAll(/\bdist\/([\w/.-]+?)\.c?js\b/g)) {
    const built = `src/${match[1]}.ts`;
    if (existsSync(join(root, built))) out.add(built);
    // The CLI's bundles hold everything its entry point imports.
    else if (match[1].startsWith("cli/")) out.add("src/cli/main.ts");
  }
  return out;
}

/**
 * The test files among `tests` that depend on a changed file. A changed code file counts as a
 * dependency of each file that imports it or names its file name in quotes ("test.mjs", a script
 * spawned by path). A changed file that is not code (a migration, a docs page, a fixture) counts as
 * a dependency of each code file that names it: by its path, its file name, or its top folder in
 * quotes or between slashes ("migrations").
 */
export function testsAffectedBy(root, changed, tests) {
  if (changed.some((path) => EVERYTHING.test(path))) return [...tests];
  const files = ["src", "test", "scripts", "bench"].flatMap((dir) => sourceFiles(root, dir));
  const texts = new Map(files.map((file) => [file, readFileSync(join(root, file), "utf8")]));
  const importers = new Map();
  for (const [file, text] of texts) {
    for (const target of dependencies(root, file, text)) {
      if (!importers.has(target)) importers.set(target, new Set());
      importers.get(target).add(file);
    }
  }
  const reached = new Set();
  const queue = [];
  const reach = (file) => {
    if (reached.has(file)) return;
    reached.add(file);
    queue.push(file);
  };
  const quoted = (name) => new RegExp(`["'/]${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["'/]`);
  // The repository's own dot-files (.gitignore, .ci/) are read by git and CI, not by the tests;
  // the code that names such a file means one in the user's project.
  for (const path of changed.filter((one) => !one.startsWith("."))) {
    const top = path.split("/")[0];
    const name = path.split("/").at(-1);
    // Code is also run by path (a script spawned by its file name) rather than imported.
    if (SOURCE.test(path)) reach(path);
    for (const [file, text] of texts) {
      if (SOURCE.test(path) ? quoted(name).test(text) : text.includes(path) || text.includes(name)) reach(file);
      else if (!SOURCE.test(path) && top !== path && quoted(top).test(text)) reach(file);
    }
  }
  while (queue.length > 0) for (const importer of importers.get(queue.shift()) ?? []) reach(importer);
  return tests.filter((test) => reached.has(test));
}
