import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { connectMcp, type McpTestClient } from "./mcp-client.js";

/**
 * Claude Code's identities, as the real MCP SDK client and the built CLI see them: the MCP server
 * Claude Code starts takes the conversation's id from CLAUDE_CODE_SESSION_ID (hooks get the same
 * id as session_id), and a sub-agent's MCP call, which the PreToolUse hook has seen with its
 * agent_id, acts as the sub-agent's own session `<session>/<agent_id>`.
 */
const SESSION = "0b7d3c2e-5f1a-4c8e-9d2b-7a6e5f4d3c2b";
const AGENT = "a1b2c3d4e5f6a7b8c";

describe("Claude Code identity over MCP and hooks", () => {
  let dir: string;
  let cleanup: () => void;
  let mcp: McpTestClient;
  const hook = (name: string, payload: Record<string, unknown>): Promise<CliResult> =>
    runCli(["hook", name], {
      cwd: dir,
      input: JSON.stringify({ session_id: SESSION, cwd: dir, hook_event_name: "x", ...payload }),
      env: { CLAUDE_PROJECT_DIR: "" },
    });
  const callAs = async (toolUseId: string, name: string, args: Record<string, unknown>) => {
    const result = (await mcp.client.callTool({
      name,
      arguments: args,
      _meta: { "claudecode/toolUseId": toolUseId },
    })) as { structuredContent: any };
    return result.structuredContent;
  };

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-claude-mcp-"));
    mkdirSync(join(dir, "src"));
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    mcp = await connectMcp(dir, { env: { CLAUDE_CODE_SESSION_ID: SESSION }, clientName: "claude-code" });
  });
  after(async () => {
    await mcp.close();
    cleanup();
  });

  it("acts as the conversation's session: MCP work and hook-recorded files meet on one task", async () => {
    const { task } = await mcp.ok("arbeit_task_create", { title: "Main work" });
    const started = await mcp.ok("arbeit_task_start_work", { task_id: task.id });
    assert.equal(started.session_id, SESSION);
    const post = await hook("post-tool-use", {
      tool_name: "Write",
      tool_input: { file_path: join(dir, "src", "main.ts") },
    });
    assert.equal(post.code, 0, post.stderr);
    const { files } = await mcp.ok("arbeit_task_get", { task_id: task.id, include: ["files"] });
    assert.deepEqual(
      files.map((f: { file_path: string; sessions: number }) => f.file_path),
      ["src/main.ts"],
    );
  });

  it("gives a sub-agent's MCP calls its own session, so it works on a task of its own", async () => {
    const { task } = await mcp.ok("arbeit_task_create", { title: "Sub-agent work" });
    const toolUseId = "toolu_01SubagentStart";
    const pre = await hook("pre-tool-use", {
      tool_name: "mcp__arbeit__arbeit_task_start_work",
      tool_use_id: toolUseId,
      agent_id: AGENT,
      agent_type: "general-purpose",
    });
    assert.equal(pre.code, 0, pre.stderr);
    assert.deepEqual(pre.stdout, "");
    const started = await callAs(toolUseId, "arbeit_task_start_work", { task_id: task.id });
    assert.equal(started.success, true, JSON.stringify(started));
    assert.equal(started.data.session_id, `${SESSION}/${AGENT}`);
    // The note is taken: the same id again is the conversation's own call.
    assert.deepEqual(readdirSync(join(dir, ".arbeit", "subagent-calls")), []);

    // The sub-agent's file goes to its own task, the conversation's to the conversation's.
    await hook("post-tool-use", {
      tool_name: "Edit",
      tool_input: { file_path: join(dir, "src", "sub.ts") },
      agent_id: AGENT,
    });
    const { files } = await mcp.ok("arbeit_task_get", { task_id: task.id, include: ["files"] });
    assert.deepEqual(
      files.map((f: { file_path: string }) => f.file_path),
      ["src/sub.ts"],
    );
    // The conversation cannot take the sub-agent's task: that session holds it.
    const taken = await mcp.call("arbeit_task_claim", { task_id: task.id });
    assert.equal(taken.envelope.error.code, "ALREADY_CLAIMED");
  });

  it("leaves no note for the main conversation's calls, and ignores ids it cannot use", async () => {
    await hook("pre-tool-use", { tool_name: "mcp__arbeit__arbeit_query", tool_use_id: "toolu_main" });
    await hook("pre-tool-use", {
      tool_name: "mcp__arbeit__arbeit_query",
      tool_use_id: "../../escape",
      agent_id: AGENT,
    });
    const notes = join(dir, ".arbeit", "subagent-calls");
    assert.deepEqual(existsSync(notes) ? readdirSync(notes) : [], []);
    const plain = await callAs("toolu_main", "arbeit_query", { query: "ready" });
    assert.equal(plain.success, true);
  });

  it("reads no named pipe as a note: the server and the hook answer instead of waiting for a writer", async () => {
    const notes = join(dir, ".arbeit", "subagent-calls");
    mkdirSync(notes, { recursive: true });
    execFileSync("mkfifo", [join(notes, "toolu_Pipe")]);
    // The server takes no note from a pipe: the call is the conversation's own, and it answers.
    const plain = await callAs("toolu_Pipe", "arbeit_query", { query: "ready" });
    assert.equal(plain.success, true);
    // The hook replaces a pipe where its note goes, and the server then reads the note.
    execFileSync("mkfifo", [join(notes, "toolu_PipeNote")]);
    const pre = await hook("pre-tool-use", {
      tool_name: "mcp__arbeit__arbeit_query",
      tool_use_id: "toolu_PipeNote",
      agent_id: AGENT,
    });
    assert.equal(pre.code, 0, pre.stderr);
    assert.equal(statSync(join(notes, "toolu_PipeNote")).isFile(), true);
  });
});
