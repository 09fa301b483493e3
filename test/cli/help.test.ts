import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { commandPath } from "../../src/cli/tool-commands.js";
import { QUERIES } from "../../src/service/queries.js";
import { TOOLS } from "../../src/tools/catalogue.js";
import { type CliProject, cliProject } from "./support.js";

/**
 * Help is generated from the catalogue, so every tool has it, with every parameter of its schema
 * as a flag. Help never needs a project: these run in a directory with no .arbeit/.
 */
const kebab = (key: string) => `--${key.replaceAll("_", "-")}`;
const groupsOf = () => [
  ...new Set(
    TOOLS.map((tool) => commandPath(tool.name))
      .filter((path) => path.length > 1)
      .map((path) => path[0]!),
  ),
];

describe("help", { concurrency: true }, () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject({ init: false });
  });
  after(() => {
    assert.equal(existsSync(join(project.dir, ".arbeit")), false, "help created nothing");
    project.cleanup();
  });

  const help = async (args: string[]) => {
    const result = await project.run(args);
    assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}`);
    assert.equal(result.stderr, "");
    return result.stdout;
  };

  it("arbeit --help lists every tool command, the other commands, global options and exit codes", async () => {
    const text = await help(["--help"]);
    assert.match(text, /^arbeit — durable task memory for AI coding agents/);
    for (const tool of TOOLS) assert.ok(text.includes(`  ${commandPath(tool.name).join(" ")}`), `${tool.name} missing`);
    for (const command of ["call", "tools", "track", "help"]) assert.match(text, new RegExp(`^  ${command}\\b`, "m"));
    for (const option of ["--json", "--db <file>", "--session <id>", "--agent <name>", "--list <id>", "--version"])
      assert.ok(text.includes(option), `${option} missing`);
    for (const env of ["ARBEIT_DB", "ARBEIT_SESSION", "ARBEIT_AGENT", "ARBEIT_LIST"]) assert.ok(text.includes(env));
    assert.match(text, /Exit codes: 0 success; 1 tool error .*; 2 usage error/);
  });

  it("-h and arbeit help say the same", async () => {
    const full = await help(["--help"]);
    assert.equal(await help(["-h"]), full);
    assert.equal(await help(["help"]), full);
  });

  for (const group of groupsOf()) {
    it(`arbeit ${group} --help lists its subcommands`, async () => {
      const text = await help([group, "--help"]);
      assert.match(text, new RegExp(`^Usage: arbeit ${group} <subcommand>`));
      for (const tool of TOOLS.filter((t) => commandPath(t.name)[0] === group && commandPath(t.name).length > 1))
        assert.ok(text.includes(`${commandPath(tool.name).join(" ")}`), `${tool.name} missing`);
    });
  }

  it("names the aliases of start-work and stop-work", async () => {
    const text = await help(["task", "--help"]);
    assert.match(text, /task start-work <task_id>\s+Start work \(alias: start\)/);
    assert.match(text, /task stop-work <task_id>\s+Stop work \(alias: stop\)/);
  });

  // arbeit_batch's operations do not fit on a command line: `arbeit batch` reads them from a file.
  for (const tool of TOOLS.filter((t) => t.name !== "arbeit_batch")) {
    const path = commandPath(tool.name);
    it(`arbeit ${path.join(" ")} --help shows ${tool.name}'s description and a flag per parameter`, async () => {
      const text = await help([...path, "--help"]);
      assert.match(text, new RegExp(`^Usage: arbeit ${path.join(" ")}\\b`));
      assert.ok(text.includes(tool.description), "the tool's own description");
      assert.ok(text.includes(`arbeit call ${tool.name}`), "the equivalent arbeit call");
      if (tool.name === "arbeit_query") return; // its flags are each query's params, below
      for (const key of Object.keys(tool.input.shape)) assert.ok(text.includes(kebab(key)), `${kebab(key)} missing`);
    });
  }

  it("arbeit batch --help says how to write the file, and that a failure writes nothing", async () => {
    const text = await help(["batch", "--help"]);
    assert.match(text, /^Usage: arbeit batch <file \| ->/);
    assert.match(text, /"\$<name>"/);
    assert.match(text, /When one operation fails nothing is written/);
  });

  it("marks required flags and lists enum values", async () => {
    const text = await help(["task", "create", "--help"]);
    assert.match(text, /^Usage: arbeit task create <title> \[--flags\]/);
    assert.match(text, /--title <text>\s+required/);
    assert.match(text, /--type <epic\|feature\|bug\|investigation\|chore>/);
    assert.match(text, /--blocked-by <a,b,\.\.\.>/);
    assert.match(text, /--priority <n>\s+0 highest, 4 lowest; default 2/);
  });

  it("arbeit help <command> is <command> --help", async () => {
    assert.equal(await help(["help", "context", "add"]), await help(["context", "add", "--help"]));
  });

  it("arbeit query --help lists every named query with its flags", async () => {
    const text = await help(["query", "--help"]);
    assert.match(text, /^Usage: arbeit query <name>/);
    for (const name of Object.keys(QUERIES)) assert.match(text, new RegExp(`^  ${name}\\b`, "m"));
    assert.match(text, /children_of .*\n\s+--task-id/);
  });

  for (const [name, def] of Object.entries(QUERIES)) {
    it(`arbeit query ${name} --help lists its params as flags`, async () => {
      const text = await help(["query", name, "--help"]);
      assert.match(text, new RegExp(`^Usage: arbeit query ${name} `));
      assert.ok(text.includes(def.summary));
      const shape = (def.params as unknown as { shape: Record<string, unknown> }).shape;
      for (const key of Object.keys(shape)) assert.ok(text.includes(kebab(key)), `${kebab(key)} missing`);
    });
  }

  it("arbeit call --help explains the JSON contract and lists the tools", async () => {
    const text = await help(["call", "--help"]);
    assert.match(text, /^Usage: arbeit call <tool_name> \['<json arguments>' \| -\]/);
    assert.match(text, /envelope \{success, data\?, warnings\?, error\?\}/);
    for (const tool of TOOLS) assert.ok(text.includes(tool.name));
  });

  it("arbeit call <tool> --help prints the tool's JSON input schema", async () => {
    const text = await help(["call", "arbeit_context_add", "--help"]);
    assert.match(text, /^Usage: arbeit call arbeit_context_add/);
    const schema = JSON.parse(text.slice(text.indexOf("{")));
    assert.deepEqual(schema.required, ["task_id", "type", "content"]);
    assert.ok(schema.properties.supersede_entry_id);
  });

  it("arbeit tools --help and arbeit track --help describe those commands", async () => {
    assert.match(await help(["tools", "--help"]), /^Usage: arbeit tools/);
    assert.match(await help(["track", "--help"]), /^Usage: arbeit track <path> \[--op read\|write\]/);
  });

  it("--version prints the package version", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    assert.equal(await help(["--version"]), `${pkg.version}\n`);
    assert.equal(await help(["-v"]), `${pkg.version}\n`);
  });
});
