import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { hostBinary, hostMissing } from "../helpers/hosts.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The real Claude Code CLI (@anthropic-ai/claude-code, installed on demand), headless, in a hermetic
 * temporary HOME, against a fake Anthropic API (fake-anthropic.ts). Facts it relies on: docs/claude-code-findings.md.
 */

export const REPO = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** The native binary, from the test cache (test/helpers/hosts.ts) or ARBEIT_TEST_CLAUDE. */
export const CLAUDE: string = hostBinary("claude").path;

/** Why the binary cannot run here, or undefined when `claude --version` works. */
export function claudeMissing(): string | undefined {
  return hostMissing("claude");
}

/** `claude --version`'s first word, e.g. "2.1.197". */
export function claudeVersion(): string {
  return execFileSync(CLAUDE, ["--version"], {
    timeout: 30_000,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "" },
  })
    .trim()
    .split(/\s+/)[0]!;
}

export interface ClaudeSandbox {
  root: string;
  /** The temporary HOME (outside the project). */
  home: string;
  tmp: string;
  project: string;
  cleanup(): void;
}

export function createSandbox(): ClaudeSandbox {
  const { dir, cleanup } = tempDir("arbeit-claude-run-");
  const home = join(dir, "home");
  const tmp = join(home, "tmp");
  const project = join(dir, "project");
  for (const path of [home, tmp, project]) mkdirSync(path, { recursive: true });
  return { root: dir, home, tmp, project, cleanup };
}

export interface ClaudeRunOptions {
  sandbox: ClaudeSandbox;
  /** The fake API, e.g. `http://127.0.0.1:1234`. */
  baseUrl: string;
  prompt: string;
  /** Continue this session (`--resume <id>`). */
  resume?: string;
  /** `--allowedTools` entries (default: the file tools and every MCP tool of server `probe`). */
  allowedTools?: string[];
  permissionMode?: string;
  extraArgs?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface ClaudeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The stream-json lines, parsed (lines that are not JSON are skipped). */
  events: any[];
  /** session_id of the `system/init` event. */
  sessionId?: string;
  /** The final `result` event. */
  result?: any;
}

/** The environment Claude Code runs with: nothing of the outer env but PATH and locale. */
export function claudeEnv(sandbox: ClaudeSandbox, baseUrl: string, extra: Record<string, string> = {}) {
  const path = [dirname(process.execPath), process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"].join(":");
  return {
    PATH: path,
    LANG: process.env.LANG ?? "C.UTF-8",
    HOME: sandbox.home,
    TMPDIR: sandbox.tmp,
    XDG_CONFIG_HOME: join(sandbox.home, ".config"),
    XDG_DATA_HOME: join(sandbox.home, ".local", "share"),
    XDG_CACHE_HOME: join(sandbox.home, ".cache"),
    XDG_STATE_HOME: join(sandbox.home, ".local", "state"),
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-fake",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_MAX_RETRIES: "1",
    ENABLE_TOOL_SEARCH: "false",
    npm_config_update_notifier: "false",
    ...extra,
  };
}

export function runClaude(options: ClaudeRunOptions): Promise<ClaudeRun> {
  const { sandbox, baseUrl, prompt } = options;
  const allowed = options.allowedTools ?? ["Read", "Write", "Edit", "Task", "Agent", "mcp__probe"];
  const args = [
    "-p",
    prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-hook-events",
    "--permission-mode",
    options.permissionMode ?? "acceptEdits",
    "--allowedTools",
    allowed.join(","),
    ...(options.resume ? ["--resume", options.resume] : []),
    ...(options.extraArgs ?? []),
  ];
  const timeoutMs = options.timeoutMs ?? 120_000;
  return new Promise((resolve) => {
    // Its own process group, so the MCP servers and hooks it started die with it.
    const child = spawn(CLAUDE, args, {
      cwd: sandbox.project,
      env: { ...claudeEnv(sandbox, baseUrl, options.env), PWD: sandbox.project },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGTERM");
      setTimeout(() => killGroup("SIGKILL"), 3_000).unref();
    }, timeoutMs);
    child.on("error", (error) => {
      stderr += `\nspawn error: ${error.message}`;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Whatever it left behind (MCP servers, hooks) goes too.
      killGroup("SIGKILL");
      const events: any[] = [];
      for (const line of stdout.split("\n")) {
        if (!line.trim()) continue;
        try {
          events.push(JSON.parse(line));
        } catch {
          // not JSON
        }
      }
      const init = events.find((event) => event.type === "system" && event.subtype === "init");
      const result = events.findLast((event) => event.type === "result");
      resolve({ code, signal, timedOut, stdout, stderr, events, sessionId: init?.session_id, result });
    });
  });
}

/** Reads a JSON-lines log; a missing file is an empty log. */
export function readJsonLines(path: string): any[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

/**
 * A hook command (node script) that appends one JSON line per call to `logFile`:
 * `{payload, sessionEnv, projectDirEnv, claudeEnv}`, where `payload` is the stdin JSON,
 * `sessionEnv` the hook's CLAUDE_CODE_SESSION_ID and `claudeEnv` every CLAUDE* variable (tokens
 * redacted). For the
 * events in `echoContext` it answers with additionalContext
 * `CTX <event> <agent_id or "main"> <tool_use_id or "-">`; otherwise it prints nothing.
 */
export function writeHookLogger(dir: string, logFile: string, echoContext: string[] = []): string {
  const script = join(dir, "hook-logger.mjs");
  writeFileSync(
    script,
    `import { appendFileSync, readFileSync } from "node:fs";
const raw = readFileSync(0, "utf8");
let payload;
try { payload = JSON.parse(raw); } catch { payload = { unparsed: raw }; }
appendFileSync(${JSON.stringify(logFile)}, JSON.stringify({
  payload,
  sessionEnv: process.env.CLAUDE_CODE_SESSION_ID ?? null,
  projectDirEnv: process.env.CLAUDE_PROJECT_DIR ?? null,
  claudeEnv: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("CLAUDE")).sort()
    .map(([k, v]) => [k, /TOKEN|KEY|SECRET/.test(k) ? "<redacted>" : v])),
}) + "\\n");
const event = payload.hook_event_name;
if (${JSON.stringify(echoContext)}.includes(event)) {
  const additionalContext = ["CTX", event, payload.agent_id ?? "main", payload.tool_use_id ?? "-"].join(" ");
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext } }));
}
`,
  );
  return script;
}

/** `.claude/settings.json` running `command` for each of `events` (every matcher). */
export function writeHookSettings(project: string, events: string[], command: string): void {
  const hooks: Record<string, unknown> = {};
  for (const event of events) hooks[event] = [{ hooks: [{ type: "command", command, timeout: 20 }] }];
  mkdirSync(join(project, ".claude"), { recursive: true });
  writeFileSync(join(project, ".claude", "settings.json"), JSON.stringify({ hooks }, null, 2));
}

/**
 * A stdio MCP server (node script, @modelcontextprotocol/sdk's low-level Server) with one tool,
 * `probe_note {text}`. It appends JSON lines to `logFile`: `{kind: "start", pid, sessionEnv,
 * claudeEnv}` once (claudeEnv: every CLAUDE* variable), `{kind: "message", message}` for every
 * JSON-RPC message it receives, and `{kind: "call", args, meta, sessionEnv, preToolUse}` for each
 * tool call, where `preToolUse` is `{agent_id, agent_type}` of the PreToolUse entry in `hookLog`
 * (written by writeHookLogger) whose tool_use_id is the call's `_meta["claudecode/toolUseId"]`,
 * or null when there is none.
 */
export function writeProbeMcpServer(dir: string, logFile: string, hookLog: string): string {
  const sdk = join(REPO, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
  const script = join(dir, "probe-mcp.mjs");
  writeFileSync(
    script,
    `import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Server } from ${JSON.stringify(join(sdk, "server", "index.js"))};
import { StdioServerTransport } from ${JSON.stringify(join(sdk, "server", "stdio.js"))};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(join(sdk, "types.js"))};
const hookLog = ${JSON.stringify(hookLog)};
function preToolUse(toolUseId) {
  if (!toolUseId || !existsSync(hookLog)) return null;
  for (const line of readFileSync(hookLog, "utf8").split("\\n")) {
    if (!line.trim()) continue;
    const { payload } = JSON.parse(line);
    if (payload.hook_event_name === "PreToolUse" && payload.tool_use_id === toolUseId) {
      return { agent_id: payload.agent_id ?? null, agent_type: payload.agent_type ?? null };
    }
  }
  return null;
}
const log = (entry) => appendFileSync(${JSON.stringify(logFile)}, JSON.stringify(entry) + "\\n");
log({
  kind: "start",
  pid: process.pid,
  sessionEnv: process.env.CLAUDE_CODE_SESSION_ID ?? null,
  claudeEnv: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("CLAUDE")).sort()
    .map(([k, v]) => [k, /TOKEN|KEY|SECRET/.test(k) ? "<redacted>" : v])),
});
const server = new Server({ name: "probe", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{
    name: "probe_note",
    description: "Record a note.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  log({
    kind: "call",
    name: request.params.name,
    args: request.params.arguments ?? null,
    meta: request.params._meta ?? null,
    sessionEnv: process.env.CLAUDE_CODE_SESSION_ID ?? null,
    preToolUse: preToolUse(request.params._meta?.["claudecode/toolUseId"]),
  });
  return { content: [{ type: "text", text: "noted " + JSON.stringify(request.params.arguments?.text ?? "") }] };
});
const transport = new StdioServerTransport();
await server.connect(transport);
const handle = transport.onmessage;
transport.onmessage = (message, extra) => {
  log({ kind: "message", message });
  handle?.(message, extra);
};
`,
  );
  return script;
}

/** `.mcp.json` declaring one stdio server `name` run by node. */
export function writeMcpJson(project: string, name: string, script: string): void {
  const config = { mcpServers: { [name]: { command: process.execPath, args: [script] } } };
  writeFileSync(join(project, ".mcp.json"), JSON.stringify(config, null, 2));
}

/**
 * `claude -p` driven the way the Agent SDK drives it (`--input-format stream-json
 * --permission-prompt-tool stdio`): the prompt is a user message on stdin, and every permission
 * request (`control_request` can_use_tool) is allowed as asked. Unlike a plain `-p` run, this
 * enables the tools that need a person's answer: ExitPlanMode, in `--permission-mode plan`, is
 * approved and its plan recorded. stdin closes after the `result` event.
 */
export function runClaudeApproving(options: ClaudeRunOptions): Promise<ClaudeRun> {
  const { sandbox, baseUrl, prompt } = options;
  const args = [
    "-p",
    "--output-format",
    "stream-json",
    "--input-format",
    "stream-json",
    "--verbose",
    "--include-hook-events",
    "--permission-prompt-tool",
    "stdio",
    "--permission-mode",
    options.permissionMode ?? "plan",
    ...(options.allowedTools ? ["--allowedTools", options.allowedTools.join(",")] : []),
    ...(options.resume ? ["--resume", options.resume] : []),
    ...(options.extraArgs ?? []),
  ];
  return new Promise((resolve) => {
    const child = spawn(CLAUDE, args, {
      cwd: sandbox.project,
      env: { ...claudeEnv(sandbox, baseUrl, options.env), PWD: sandbox.project },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let pending = "";
    let timedOut = false;
    const events: any[] = [];
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      pending += chunk;
      for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        let event: any;
        try {
          event = JSON.parse(line);
        } catch {
          continue;
        }
        events.push(event);
        if (event.type === "control_request" && event.request?.subtype === "can_use_tool") {
          const response = { behavior: "allow", updatedInput: event.request.input };
          child.stdin.write(
            `${JSON.stringify({ type: "control_response", response: { subtype: "success", request_id: event.request_id, response } })}\n`,
          );
        } else if (event.type === "result") child.stdin.end();
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    child.stdin.on("error", () => undefined);
    child.stdin.write(`${JSON.stringify({ type: "user", message: { role: "user", content: prompt } })}\n`);
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGTERM");
      setTimeout(() => killGroup("SIGKILL"), 3_000).unref();
    }, options.timeoutMs ?? 120_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      killGroup("SIGKILL");
      const init = events.find((event) => event.type === "system" && event.subtype === "init");
      const result = events.findLast((event) => event.type === "result");
      resolve({ code, signal, timedOut, stdout, stderr, events, sessionId: init?.session_id, result });
    });
  });
}
