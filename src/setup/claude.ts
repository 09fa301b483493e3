import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  claudeCommand,
  mergeClaudeSettings,
  mergeMcpConfig,
  removeClaudeHooks,
  removeMcpServer,
} from "./claude-config.js";
import { rememberCreated, toBeCreated } from "./created-files.js";
import { checkWritable } from "./files.js";
import { addInstructions, removeInstructions } from "./instruction-file.js";
import { readJsonObject, writeJson, writeRemainder } from "./json-file.js";
import {
  checkStoreCreatable,
  ensureInitialized,
  newReport,
  noteDatabaseKept,
  record,
  type SetupReport,
} from "./report.js";

/**
 * `arbeit setup claude`: hooks in .claude/settings.json, the MCP server in .mcp.json, merged
 * into what is there, and the instruction block in CLAUDE.md. Every file is read and its change
 * worked out before any is written, so a file that is refused leaves the others untouched too.
 */
export async function setupClaude(options: { dir: string; command?: string }): Promise<SetupReport> {
  const report = newReport("claude", options.dir);
  const command = claudeCommand(options.dir, options.command);
  const paths = claudeFiles(options.dir);
  const creating = paths.flatMap((path) => toBeCreated(options.dir, path));
  const settingsFile = readJsonObject(paths[0]);
  const mcpFile = readJsonObject(paths[1]);
  const settings = mergeClaudeSettings(settingsFile.value, command);
  const mcp = mergeMcpConfig(mcpFile.value, command);
  const instructions = addInstructions(paths[2]);
  const changes = [
    settings.added.length > 0 ? `hooks: ${settings.added.join(", ")}` : "",
    settings.updated.length > 0 ? `now running ${command.summary}: ${settings.updated.join(", ")}` : "",
  ].filter(Boolean);
  const mcpWrites = mcp.action === "added" || mcp.action === "updated";
  checkAllWritable(options.dir, [changes.length > 0, mcpWrites, instructions.writes], paths);
  checkStoreCreatable(options.dir);

  if (changes.length > 0)
    record(report, settingsFile.path, writeJson(settingsFile, settings.value), changes.join("; "));
  else record(report, settingsFile.path, "unchanged", "Arbeit hooks already present");
  if (mcp.action === "unchanged") record(report, mcpFile.path, "unchanged", "MCP server arbeit already present");
  else if (mcp.action === "kept") {
    record(report, mcpFile.path, "unchanged", "an MCP server arbeit of your own");
    report.notes.push(
      ".mcp.json has an `arbeit` server setup did not write; it was kept. Claude Code runs that one for the arbeit_* tools.",
    );
  } else {
    const detail = mcp.action === "added" ? "MCP server arbeit" : `MCP server arbeit now running ${command.summary}`;
    record(report, mcpFile.path, writeJson(mcpFile, mcp.value), detail);
  }
  instructions(report);
  if (!command.portable) {
    report.notes.push(
      `arbeit is not installed in this project, so the hooks and the MCP server run ${command.summary}, a path on ` +
        "this machine. For files you can commit, install arbeit in the project (`npm install --save-dev <path to an Arbeit checkout or its packed tarball>`, see README.md) and run `npx arbeit setup claude` again.",
    );
  }

  await ensureInitialized(report);
  rememberCreated(
    options.dir,
    creating.filter((path) => existsSync(path)),
  );
  return report;
}

/** Checks, before any is written, each file of `paths` that will be written (`writes`). */
function checkAllWritable(dir: string, writes: boolean[], paths: string[]): void {
  paths.forEach((path, at) => {
    if (writes[at]) checkWritable(path, dir);
  });
}

/** The files setup claude writes: settings, MCP servers, instructions. */
function claudeFiles(dir: string): [string, string, string] {
  return [join(dir, ".claude", "settings.json"), join(dir, ".mcp.json"), join(dir, "CLAUDE.md")];
}

/** `arbeit setup claude --remove`: takes out Arbeit's hooks, server and block, and nothing else. */
export function removeClaude(options: { dir: string; command?: string }): SetupReport {
  const report = newReport("claude", options.dir, "remove");
  const explicit = options.command?.trim();
  const paths = claudeFiles(options.dir);
  const settingsFile = readJsonObject(paths[0]);
  const mcpFile = readJsonObject(paths[1]);
  const settings = removeClaudeHooks(settingsFile.value, explicit);
  const mcp = removeMcpServer(mcpFile.value, explicit);
  const instructions = removeInstructions(paths[2]);
  checkAllWritable(options.dir, [settings.removed.length > 0, mcp.removed, instructions.writes], paths);

  if (settings.removed.length > 0) {
    const action = writeRemainder(settingsFile, settings.value, options.dir);
    record(report, settingsFile.path, action, `hooks: ${settings.removed.join(", ")}`);
  } else record(report, settingsFile.path, "unchanged", "no Arbeit hooks");
  if (mcp.removed) record(report, mcpFile.path, writeRemainder(mcpFile, mcp.value, options.dir), "MCP server arbeit");
  else if (mcp.kept) {
    record(report, mcpFile.path, "unchanged", "an MCP server arbeit of your own");
    report.notes.push(".mcp.json has an `arbeit` server setup did not write; it was kept.");
  } else record(report, mcpFile.path, "unchanged", "no MCP server arbeit");
  instructions(report);
  noteDatabaseKept(report);
  return report;
}
