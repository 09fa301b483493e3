import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { renderToolsDoc, renderToolTokensDoc, TOOL_TOKENS_DOC, TOOLS_DOC } from "../../scripts/gen-docs.js";
import { ERROR_CODES } from "../../src/domain/errors.js";
import { QUERY_NAMES } from "../../src/service/queries.js";
import { TOOLS } from "../../src/tools/catalogue.js";

describe("generated docs", () => {
  it("docs/tools.md is up to date with the tool catalogue and the named queries", () => {
    const committed = readFileSync(TOOLS_DOC, "utf8");
    assert.ok(
      committed === renderToolsDoc(),
      "docs/tools.md is stale: the tool catalogue or the queries changed. Run `npm run docs` and commit docs/tools.md.",
    );
  });

  it("docs/tool-tokens.md is up to date with the tool list clients receive", async () => {
    assert.ok(
      readFileSync(TOOL_TOKENS_DOC, "utf8") === (await renderToolTokensDoc()),
      "docs/tool-tokens.md is stale: the tool list changed size. Run `npm run docs` and commit docs/tool-tokens.md.",
    );
  });

  it("documents every tool and every query", () => {
    const doc = renderToolsDoc();
    for (const tool of TOOLS) {
      assert.ok(doc.includes(`\n## ${tool.name}\n`), tool.name);
      assert.ok(doc.includes(tool.description), `${tool.name} description`);
    }
    for (const query of QUERY_NAMES) assert.ok(doc.includes(`\n### ${query}\n`), query);
  });

  it("shows enums and limits in the parameter tables", () => {
    const doc = renderToolsDoc();
    assert.match(doc, /\| `title` \| string \| yes \| 1–500 chars \|/);
    assert.match(doc, /\| `status` \| `open` \\\| `in_progress` \\\| `completed` \\\| `cancelled` \|/);
  });

  it("lists every warning and status code the source emits, beside the error codes", () => {
    const doc = renderToolsDoc();
    const src = new URL("../../src/", import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        // The dashboard page's own request errors stay in the page.
        if (path === join(src, "ui", "app")) return [];
        return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
      });
    const emitted = new Set<string>();
    for (const file of files(src))
      for (const match of readFileSync(file, "utf8").matchAll(/\bcode: "([A-Z][A-Z_]+)"/g)) emitted.add(match[1]!);
    const errors = new Set<string>(ERROR_CODES);
    const others = [...emitted].filter((code) => !errors.has(code)).sort();
    for (const code of [
      "HAS_INCOMPLETE_CHILDREN",
      "HAS_BLOCKERS",
      "STALE_CONTEXT",
      "ORPHAN_RELATIONSHIPS",
      "MEMORY_EVICTED",
    ])
      assert.ok(others.includes(code), `the scan finds ${code}`);
    const warnings = doc.slice(doc.indexOf("\n## Warning codes\n"));
    assert.ok(warnings.length < doc.length, "docs/tools.md has a Warning codes section");
    assert.deepEqual(
      others.filter((code) => !warnings.includes(`| \`${code}\` |`)),
      [],
      "codes the source emits that the reference does not list",
    );
  });
});
