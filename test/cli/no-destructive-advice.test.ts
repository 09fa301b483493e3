import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { commandsForTools } from "../../src/cli/tool-hints.js";
import { ERROR_SUGGESTIONS } from "../../src/domain/errors.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * Agents do what tool text tells them, literally. So no error message, suggestion, hint or note
 * Arbeit writes ever proposes a destructive step as the fix: re-initialising, forcing
 * (`--force`, `force: true`), replacing a store (`--replace`), deleting a store or a file. Where
 * such a step may be right, the text says what to check, or that a person decides.
 */

const DESTRUCTIVE: RegExp[] = [
  /\barbeit init\b/i,
  /--force\b/,
  /\bforce:\s*true\b/,
  /--replace\b/,
  /\brm -rf?\b/,
  /\bdelete the\b/i,
  /\bre-?init/i,
];

/**
 * The only texts that may match, each for a reason. Keep this list tiny: a new entry needs a text
 * that cannot be said another way.
 */
const ALLOWED = new Map<string, string>([
  [
    ERROR_SUGGESTIONS.NOT_INITIALIZED[0],
    "creating a store where none was found is the fix, after checking the folder; arbeit_init refuses " +
      "an existing store (ALREADY_INITIALIZED) and a folder inside a project, so it cannot replace one",
  ],
]);

/** The text as an agent reads it and as a person at a terminal reads it (tool calls as commands). */
function destructive(text: string): RegExp | undefined {
  if (ALLOWED.has(text)) return undefined;
  return DESTRUCTIVE.find((pattern) => pattern.test(text) || pattern.test(commandsForTools(text)));
}

const SRC = new URL("../../src", import.meta.url).pathname;
/** Object properties whose value is text for the caller to act on. */
const ADVICE_PROPERTIES = new Set(["suggestions", "hint", "hints", "message", "note", "notes", "warning"]);
/** Lists such text is pushed onto. */
const ADVICE_LISTS = /(?:^|\.)(?:notes|warnings|hints|suggestions|problems|attention)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * Every string in src/ that reaches a caller as advice: the arguments of `new …Error(…)` (a
 * UsageError's message, not the usage it reprints), the value of a `suggestions` / `hint` /
 * `message` / `note` property, and what is pushed onto a list of notes, warnings or problems.
 * A template's `${…}` parts are read as "…".
 */
function adviceTexts(): Array<{ where: string; text: string }> {
  const found: Array<{ where: string; text: string }> = [];
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const where = (node: ts.Node) =>
      `${relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node, advice: boolean): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
        if (advice) found.push({ where: where(node), text: node.text });
        return;
      }
      if (ts.isTemplateExpression(node)) {
        if (advice) {
          const text = node.head.text + node.templateSpans.map((span) => `…${span.literal.text}`).join("");
          found.push({ where: where(node), text });
        }
        for (const span of node.templateSpans) visit(span.expression, advice);
        return;
      }
      if (ts.isNewExpression(node) && /Error$/.test(node.expression.getText(source))) {
        const args = node.arguments ?? [];
        const usage = node.expression.getText(source) === "UsageError";
        for (const [i, arg] of args.entries()) visit(arg, advice || !usage || i === 0);
        return;
      }
      if (ts.isPropertyAssignment(node) && ADVICE_PROPERTIES.has(node.name.getText(source))) {
        visit(node.initializer, true);
        return;
      }
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === "push" &&
        ADVICE_LISTS.test(node.expression.expression.getText(source))
      ) {
        for (const arg of node.arguments) visit(arg, true);
        return;
      }
      ts.forEachChild(node, (child) => visit(child, advice));
    };
    visit(source, false);
  }
  return found;
}

describe("no tool text proposes a destructive step", () => {
  it("the patterns catch the advice this rule was written against", () => {
    for (const text of [
      "Restore the newest backup, or import an export into a new store with `arbeit init` and `arbeit import`.",
      "A person can break a stale claim: arbeit_task_claim {action: release, task_id, force: true}.",
      "Run `arbeit init` in a new folder and import there, or pass --replace to discard what is here.",
      "Name a new file, or pass --force to replace this one.",
      "The database (.arbeit/) was kept; delete the folder yourself if you no longer want it.",
      "Call arbeit_init again to start over.",
    ]) {
      assert.ok(destructive(text), `not caught: ${text}`);
    }
  });

  it("every error code's default suggestions", () => {
    const offending = Object.entries(ERROR_SUGGESTIONS).flatMap(([code, texts]) =>
      texts.filter((text) => destructive(text)).map((text) => `${code}: ${text}`),
    );
    assert.deepEqual(offending, []);
  });

  it("every message, suggestion, hint and note written in src/", () => {
    const texts = adviceTexts();
    // The scan must see the advice it is meant to hold to the rule, or it proves nothing.
    assert.ok(texts.length > 200, `only ${texts.length} texts found`);
    for (const known of ["breaking another session's claim is a person's decision", "already holds data"]) {
      assert.ok(
        texts.some(({ text }) => text.includes(known)),
        `the scan missed "${known}"`,
      );
    }
    const offending = texts.filter(({ text }) => destructive(text)).map(({ where, text }) => `${where}: ${text}`);
    assert.deepEqual(offending, []);
  });

  it("the allow-list holds only texts the code still has", () => {
    const all = [...Object.values(ERROR_SUGGESTIONS).flat(), ...adviceTexts().map(({ text }) => text)];
    for (const text of ALLOWED.keys()) assert.ok(all.includes(text), `stale allow-list entry: ${text}`);
  });
});

describe("real failures through the CLI give safe advice", () => {
  /** The envelope's suggestions, after checking the call failed with `code`. */
  function suggestions(result: Awaited<ReturnType<typeof runCli>>, code: string): string[] {
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(result.json.error.code, code, result.stdout);
    const texts: string[] = result.json.error.suggestions ?? [];
    assert.ok(texts.length > 0, `${code} comes with advice`);
    const bad = texts.filter((text) => destructive(text));
    assert.deepEqual(bad, [], `${code}: ${result.json.error.message}`);
    return texts;
  }

  async function project() {
    const { dir } = tempDir();
    const init = await runCli(["init"], { cwd: dir });
    assert.equal(init.code, 0, init.stdout);
    const call = (tool: string, args: Record<string, unknown>, session = "ses-one") =>
      runCli(["call", tool, JSON.stringify(args), "--session", session], { cwd: dir });
    return { dir, call };
  }

  it("a task another session holds: pick another or wait; forcing is a person's decision", async () => {
    const { call } = await project();
    const task = (await call("arbeit_task_create", { title: "held" })).json.data.task.id;
    assert.equal((await call("arbeit_task_claim", { task_id: task })).code, 0);
    for (const [tool, args] of [
      ["arbeit_task_claim", { task_id: task }],
      ["arbeit_task_start_work", { task_id: task }],
      ["arbeit_task_claim", { task_id: task, action: "release" }],
    ] as const) {
      const texts = suggestions(await call(tool, args, "ses-two"), "ALREADY_CLAIMED");
      assert.match(texts.join(" "), /another task/);
      assert.match(texts.join(" "), /a person's decision/);
    }
  });

  it("a damaged database file: leave it and tell a person", async () => {
    const { dir } = tempDir();
    writeFileSync(join(dir, "broken.db"), "SQLite format 3\0 and then nothing a database holds");
    const texts = suggestions(
      await runCli(["query", "tasks", "--db", join(dir, "broken.db")], { cwd: dir }),
      "STORE_DAMAGED",
    );
    assert.match(texts.join(" "), /Leave the file as it is and tell a person/);
  });

  it("no store found: check where you are before creating one", async () => {
    const { dir } = tempDir();
    const texts = suggestions(await runCli(["query", "tasks"], { cwd: dir }), "NOT_INITIALIZED");
    assert.match(texts.join(" "), /check the folder you run in/);
  });

  it("init inside a project: nothing to do, and no second store", async () => {
    const { dir } = await project();
    mkdirSync(join(dir, "sub"));
    const texts = suggestions(await runCli(["init"], { cwd: join(dir, "sub") }), "ALREADY_INITIALIZED");
    assert.doesNotMatch(texts.join(" "), /--nested/);
  });

  it("deleting a task with children: cancel it or re-parent them", async () => {
    const { call } = await project();
    const parent = (await call("arbeit_task_create", { title: "parent" })).json.data.task.id;
    await call("arbeit_task_create", { title: "child", parent_id: parent });
    const texts = suggestions(await call("arbeit_task_delete", { task_id: parent }), "HAS_CHILDREN");
    assert.match(texts.join(" "), /Cancel the task instead/);
  });

  it("export onto an existing file, import into a store that holds data: nothing is replaced", async () => {
    const { dir, call } = await project();
    await call("arbeit_task_create", { title: "kept" });
    const file = join(dir, "tasks.jsonl");
    writeFileSync(file, "not mine to overwrite\n");
    suggestions(await runCli(["export", file], { cwd: dir }), "INVALID_ARGUMENT");
    assert.equal(readFileSync(file, "utf8"), "not mine to overwrite\n");
    assert.equal((await runCli(["export", join(dir, "all.jsonl")], { cwd: dir })).code, 0);
    const texts = suggestions(await runCli(["import", join(dir, "all.jsonl")], { cwd: dir }), "INVALID_ARGUMENT");
    assert.match(texts.join(" "), /a person's decision/);
  });
});
