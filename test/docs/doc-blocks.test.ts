import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { requirement } from "../helpers/requirements.js";
import { parseDoc } from "./doc-blocks.js";
import { runPage } from "./doc-runner.js";
import { IdMap, mask } from "./normalise.js";

const PAGE = [
  "# A page",
  "",
  "```",
  "$ npx arbeit init --json | jq -r .data.initialized",
  "true",
  "",
  // The JSON contract, not the text rendering, which changes more often.
  `$ npx arbeit task create 'Fix login' --json | jq -r '.data.task | "\\(.id) \\(.status)", "  version \\(.version), updated \\(.updated_at)"'`,
  "tkt-aaaaaaaa open",
  "  version 1, updated 2020-01-01T00:00:00.000Z",
  "",
  "$ npx arbeit task get tkt-aaaaaaaa --json | jq -r .data.task.title",
  "Fix login",
  "```",
  "",
  "```ts",
  "const notRun = true;",
  "```",
  "",
  "<!-- doc-test: exit 2 -->",
  "```sh",
  "npx arbeit task create --no-such-flag",
  "```",
  "",
].join("\n");

describe("executable docs: the machinery", () => {
  it("finds transcripts, scripts and markers, and leaves other blocks alone", () => {
    const page = parseDoc(PAGE, "page.md");
    assert.deepEqual(
      page.blocks.map((block) => block.kind),
      ["transcript", "other", "script"],
    );
    const [transcript, , script] = page.blocks;
    assert.deepEqual(
      transcript!.steps.map((step) => [step.line, step.command, step.output]),
      [
        [4, "npx arbeit init --json | jq -r .data.initialized", "true"],
        [7, PAGE.split("\n")[6]!.slice(2), "tkt-aaaaaaaa open\n  version 1, updated 2020-01-01T00:00:00.000Z"],
        [11, "npx arbeit task get tkt-aaaaaaaa --json | jq -r .data.task.title", "Fix login"],
      ],
    );
    assert.deepEqual(script!.markers, [{ kind: "exit", code: 2 }]);
    assert.throws(
      () => parseDoc("<!-- doc-test: sometimes -->\n```sh\ntrue\n```\n", "x.md"),
      /unknown doc-test marker/,
    );
    assert.throws(
      () => parseDoc("<!-- doc-test: fresh project -->\ntext\n```sh\ntrue\n```\n", "x.md"),
      /followed directly/,
    );
  });

  it("maps ids in order of first appearance and masks times and versions", () => {
    const ids = new IdMap();
    ids.learn("tkt-real0001 then ctx-real0002, tkt-real0001", "tkt-doc00001 then ctx-doc00002, tkt-doc00001");
    assert.equal(ids.toDoc("tkt-real0001 ctx-real0002 tkt-other001"), "tkt-doc00001 ctx-doc00002 tkt-other001");
    assert.equal(ids.toReal("npx arbeit task get tkt-doc00001"), "npx arbeit task get tkt-real0001");
    assert.equal(
      mask("arbeit 0.3.1 at 2026-11-21T13:44:19.572Z in 12ms  "),
      mask("arbeit 0.1.0 at 2020-01-01T00:00:00.000Z in 3 s"),
    );
    assert.notEqual(mask("files_tracked: 0"), mask("files_tracked: 1"));
  });

  const missing = ["script", "jq", "git"].filter((tool) => spawnSync(tool, ["--version"]).status !== 0);
  const tools = {
    skip: requirement(
      "the executable docs' own run",
      missing.length === 0 ? undefined : `${missing.join(", ")} missing`,
    ),
  };

  it("fails on an output that differs, and an update rewrites it from the run", tools, () => {
    const wrong = PAGE.replace("tkt-aaaaaaaa open", "tkt-aaaaaaaa completed");
    const failed = runPage("page.md", parseDoc(wrong, "page.md"), { update: false });
    try {
      assert.equal(failed.failures.length, 1, failed.failures.join("\n"));
      assert.match(
        failed.failures[0]!,
        /^page\.md:7: `npx arbeit task create 'Fix login' --json .*` printed something else/,
      );
      assert.match(failed.failures[0]!, /- shown: {2}tkt-aaaaaaaa completed\n {2}\+ actual: tkt-aaaaaaaa open\n/);
    } finally {
      for (const project of failed.projects) project.cleanup();
    }

    const updated = runPage("page.md", parseDoc(wrong, "page.md"), { update: true });
    try {
      assert.deepEqual(updated.failures, []);
      assert.equal(updated.updated, 1);
      // The page keeps its own id and time; only what really changed is rewritten.
      assert.equal(updated.text, PAGE);
    } finally {
      for (const project of updated.projects) project.cleanup();
    }
  });
});
