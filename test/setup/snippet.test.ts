import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TOOL_NAMES } from "../../src/tools/catalogue.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { countTokens } from "../helpers/tokenizer.js";

/**
 * The instruction block setup writes into CLAUDE.md (Claude Code) and AGENTS.md (OpenCode): when
 * to resume, create, start and finish tasks and record decisions, in the project's own words.
 */

/** The most the block may cost an agent, in o200k_base tokens, on every turn of every session. */
const TOKEN_BUDGET = 200;
const REPO = fileURLToPath(new URL("../../", import.meta.url));

const BLOCK = /<!-- arbeit:start -->\n[\s\S]*?\n<!-- arbeit:end -->/;

function setup(dir: string, ...args: string[]): Promise<CliResult> {
  return runCli(["setup", ...args, "--json"], { cwd: dir });
}

const read = (path: string) => readFileSync(path, "utf8");
const actionOf = (result: CliResult, path: string) =>
  result.json.data.files.find((file: any) => file.path === path)?.action;

function blockOf(text: string): string {
  const block = BLOCK.exec(text)?.[0];
  assert.ok(block, `no Arbeit block in:\n${text}`);
  return block;
}

describe("the instruction block", () => {
  it("setup claude creates CLAUDE.md holding the block, and reports it", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    const result = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(actionOf(result, "CLAUDE.md"), "created");
    const text = read(join(dir, "CLAUDE.md"));
    assert.equal(text, `${blockOf(text)}\n`);
    cleanup();
  });

  it("setup opencode writes the same block into AGENTS.md, with or without --npm", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    const claude = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(claude.code, 0, claude.stderr);
    const local = await setup(dir, "opencode");
    assert.equal(local.code, 0, local.stderr);
    assert.equal(actionOf(local, "AGENTS.md"), "created");
    assert.equal(read(join(dir, "AGENTS.md")), read(join(dir, "CLAUDE.md")));
    const npm = await setup(dir, "opencode", "--npm");
    assert.equal(actionOf(npm, "AGENTS.md"), "unchanged");
    cleanup();
  });

  it("names only tools of the catalogue, and the ones an agent needs to keep its work", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    await setup(dir, "claude", "--command", "arbeit");
    const block = blockOf(read(join(dir, "CLAUDE.md")));
    const named = new Set(block.match(/\barbeit_\w+/g));
    for (const name of named) assert.ok(TOOL_NAMES.includes(name), `${name} is not a tool of the catalogue`);
    for (const needed of [
      "arbeit_init",
      "arbeit_resume",
      "arbeit_query",
      "arbeit_task_create",
      "arbeit_task_start_work",
      "arbeit_context_add",
      "arbeit_task_update",
      "arbeit_task_stop_work",
    ]) {
      assert.ok(named.has(needed), `the block does not mention ${needed}`);
    }
    cleanup();
  });

  it(`costs at most ${TOKEN_BUDGET} o200k tokens, as many as the docs say`, async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    await setup(dir, "claude", "--command", "arbeit");
    const tokens = countTokens(blockOf(read(join(dir, "CLAUDE.md"))));
    assert.ok(tokens <= TOKEN_BUDGET, `the block is ${tokens} tokens, over the budget of ${TOKEN_BUDGET}`);
    for (const page of ["docs/claude-code.md", "docs/opencode.md"]) {
      const shown = /block is (\d+)\s+tokens\s+\(o200k_base\)/.exec(read(join(REPO, page)))?.[1];
      assert.equal(Number(shown), tokens, `${page} gives the block's size as ${shown} tokens`);
    }
    cleanup();
  });

  it("is appended after the user's text, which stays as it was, and a second run changes nothing", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    const mine = "# My project\n\nRun `make check` before committing.\n";
    writeFileSync(join(dir, "CLAUDE.md"), mine);
    const first = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(actionOf(first, "CLAUDE.md"), "updated");
    const text = read(join(dir, "CLAUDE.md"));
    assert.equal(text, `${mine}\n${blockOf(text)}\n`);
    const second = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(actionOf(second, "CLAUDE.md"), "unchanged");
    assert.equal(read(join(dir, "CLAUDE.md")), text);
    cleanup();
  });

  it("replaces an outdated block where it stands, keeping the text before and after it", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    await setup(dir, "claude", "--command", "arbeit");
    const current = blockOf(read(join(dir, "CLAUDE.md")));
    const outdated = "<!-- arbeit:start -->\nCall arbeit_old_tool first.\n<!-- arbeit:end -->";
    writeFileSync(join(dir, "CLAUDE.md"), `Before.\n\n${outdated}\n\nAfter.\n`);
    const result = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(actionOf(result, "CLAUDE.md"), "updated");
    assert.equal(read(join(dir, "CLAUDE.md")), `Before.\n\n${current}\n\nAfter.\n`);
    cleanup();
  });

  it("refuses a start marker without its end marker, touching no file", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    const broken = "Notes.\n<!-- arbeit:start -->\nhalf a block\n";
    writeFileSync(join(dir, "CLAUDE.md"), broken);
    const result = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /CLAUDE\.md has <!-- arbeit:start --> without <!-- arbeit:end -->/);
    assert.equal(read(join(dir, "CLAUDE.md")), broken);
    assert.equal(existsSync(join(dir, ".mcp.json")), false);
    assert.equal(existsSync(join(dir, ".arbeit")), false);
    cleanup();
  });

  it("in a project that uses an Arbeit service, says to log in and never to make a store, within the budget", async () => {
    const { dir, cleanup } = tempDir("arbeit-snippet-");
    try {
      const init = await runCli(["init", "--server", "https://arbeit.example.com", "--json"], { cwd: dir });
      assert.equal(init.code, 0, init.stdout + init.stderr);
      for (const host of ["claude", "opencode"]) {
        const result = await setup(dir, host, ...(host === "claude" ? ["--command", "arbeit"] : []));
        assert.equal(result.code, 0, result.stdout + result.stderr);
      }
      const block = blockOf(read(join(dir, "CLAUDE.md")));
      assert.equal(blockOf(read(join(dir, "AGENTS.md"))), block);
      assert.doesNotMatch(block, /NOT_INITIALIZED/);
      assert.match(block, /never `arbeit_init`/);
      assert.match(block, /UNAUTHORIZED, ask the person to run the `arbeit login` it names/);
      assert.ok(countTokens(block) <= TOKEN_BUDGET, `the block is ${countTokens(block)} tokens`);
      // A second run leaves the block as it is: it is the one this kind of project gets.
      assert.equal(actionOf(await setup(dir, "claude", "--command", "arbeit"), "CLAUDE.md"), "unchanged");
      // The same project on a store of its own gets the other block back.
      rmSync(join(dir, ".arbeit"), { recursive: true });
      assert.equal((await runCli(["init", "--json"], { cwd: dir })).code, 0);
      const local = await setup(dir, "claude", "--command", "arbeit");
      assert.equal(actionOf(local, "CLAUDE.md"), "updated");
      assert.match(blockOf(read(join(dir, "CLAUDE.md"))), /if it answers NOT_INITIALIZED, `arbeit_init` once/);
    } finally {
      cleanup();
    }
  });
});
