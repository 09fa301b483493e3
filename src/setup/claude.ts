import { join } from "node:path";
import { claudeCommand, mergeClaudeSettings, mergeMcpConfig } from "./claude-config.js";
import { readJsonObject, writeJson } from "./json-file.js";
import { ensureInitialized, newReport, record, type SetupReport } from "./report.js";

/**
 * `arbeit setup claude`: hooks in .claude/settings.json, the MCP server in .mcp.json, merged
 * into what is there. Both files are read and merged before either is written, so a file that
 * is refused leaves the other untouched too.
 */
export async function setupClaude(options: { dir: string; command?: string }): Promise<SetupReport> {
  const report = newReport("claude", options.dir);
  const command = claudeCommand(options.dir, options.command);
  const settingsFile = readJsonObject(join(options.dir, ".claude", "settings.json"));
  const mcpFile = readJsonObject(join(options.dir, ".mcp.json"));
  const settings = mergeClaudeSettings(settingsFile.value, command);
  const mcp = mergeMcpConfig(mcpFile.value, command);

  const changes = [
    settings.added.length > 0 ? `hooks: ${settings.added.join(", ")}` : "",
    settings.updated.length > 0 ? `now running ${command.summary}: ${settings.updated.join(", ")}` : "",
  ].filter(Boolean);
  if (changes.length > 0)
    record(report, settingsFile.path, writeJson(settingsFile, settings.value), changes.join("; "));
  else record(report, settingsFile.path, "unchanged", "Arbeit hooks already present");
  if (mcp.action === "unchanged") record(report, mcpFile.path, "unchanged", "MCP server arbeit already present");
  else {
    const detail = mcp.action === "added" ? "MCP server arbeit" : `MCP server arbeit now running ${command.summary}`;
    record(report, mcpFile.path, writeJson(mcpFile, mcp.value), detail);
  }
  if (!command.portable) {
    report.notes.push(
      `arbeit is not installed in this project, so the hooks and the MCP server run ${command.summary}, a path on ` +
        "this machine. For files you can commit, run `npm install --save-dev arbeit` and `npx arbeit setup claude` again.",
    );
  }

  await ensureInitialized(report);
  return report;
}
