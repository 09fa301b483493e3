import { join } from "node:path";
import { DEFAULT_COMMAND, mergeClaudeSettings, mergeMcpConfig } from "./claude-config.js";
import { readJsonObject, writeJson } from "./json-file.js";
import { ensureInitialized, newReport, record, type SetupReport } from "./report.js";

/**
 * `arbeit setup claude`: hooks in .claude/settings.json, the MCP server in .mcp.json, merged
 * into what is there. Both files are read and merged before either is written, so a file that
 * is refused leaves the other untouched too.
 */
export async function setupClaude(options: { dir: string; command?: string }): Promise<SetupReport> {
  const report = newReport("claude", options.dir);
  const settingsFile = readJsonObject(join(options.dir, ".claude", "settings.json"));
  const mcpFile = readJsonObject(join(options.dir, ".mcp.json"));
  const settings = mergeClaudeSettings(settingsFile.value, options.command ?? DEFAULT_COMMAND);
  const mcp = mergeMcpConfig(mcpFile.value, options.command ?? DEFAULT_COMMAND);

  if (settings.added.length > 0) {
    record(report, settingsFile.path, writeJson(settingsFile, settings.value), `hooks: ${settings.added.join(", ")}`);
  } else record(report, settingsFile.path, "unchanged", "Arbeit hooks already present");
  if (mcp.added) record(report, mcpFile.path, writeJson(mcpFile, mcp.value), "MCP server arbeit");
  else record(report, mcpFile.path, "unchanged", "MCP server arbeit already present");

  await ensureInitialized(report);
  return report;
}
