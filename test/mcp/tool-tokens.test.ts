import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { measureToolTokens, TOOL_TOKEN_TARGET } from "../../scripts/tool-tokens.js";
import { TOOLS } from "../../src/tools/catalogue.js";

describe("the MCP tool list's size", () => {
  it(`stays under ${TOOL_TOKEN_TARGET} tokens for all tools`, async () => {
    const measured = await measureToolTokens();
    assert.equal(measured.tools.length, TOOLS.length);
    assert.ok(
      measured.total < TOOL_TOKEN_TARGET,
      `The tools/list result is ${measured.total} tokens (target < ${TOOL_TOKEN_TARGET}); every agent pays it every turn. ` +
        "Tighten tool and parameter descriptions in src/tools (see `npm run tool-tokens` for the per-tool table).",
    );
    assert.ok(measured.model_facing <= measured.total);
  });
});
