import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { renderToolsDoc, renderToolTokensDoc, TOOL_TOKENS_DOC, TOOLS_DOC } from "../../scripts/gen-docs.js";
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
});
