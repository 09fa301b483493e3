import { fstatSync, read } from "node:fs";
import { HOOK_NAMES, type HookName, type HookOutcome } from "../claude/hook-common.js";
import { write } from "./direct-write.js";
import { envSetting, type GlobalOptions } from "./global-options.js";
import { terminalSafe } from "./terminal-text.js";

const USAGE = `Usage: arbeit hook <${HOOK_NAMES.join(" | ")}>

Claude Code command hooks: read the hook's JSON on stdin (arbeit setup claude configures them).
  session-start          prints the session's resume (task briefing, memory, news) as additionalContext
  user-prompt-submit     logs the prompt; prints news from other sessions as additionalContext
  pre-tool-use           before an Arbeit MCP call: tells the MCP server when a sub-agent made it
  post-tool-use          records Read/Write/Edit/MultiEdit/NotebookEdit files and git commits on the active task;
                         mirrors TaskCreate/TaskUpdate/TodoWrite as its progress; records an approved ExitPlanMode plan
  post-tool-use-failure  records a failed tool call as an attempt on the active task (rate-limited)
  task-created           mirrors a task of Claude Code's task list as a progress item of the active task
  task-completed         completes that progress item
  subagent-start         records the sub-agent; prints its parent's task briefing to it
  subagent-stop          stops the sub-agent's work (with a handoff note) and records it
  pre-compact            prints the active (else last worked on) task's briefing for the compaction summary
  post-compact           records the compaction on the active task
  session-end            writes a handoff note on the active task, stops the work and hands back its claim
                         (at every end, each \`claude -p\` run's included)
Arbeit-side problems never fail the hook: they are noted on stderr and the exit code stays 0.
`;

/** Claude Code always sends a payload and closes stdin; never wait forever for one that doesn't. */
const STDIN_TIMEOUT_MS = 5_000;
/**
 * Far above any payload Arbeit reads (a tool call's input and a part of its output), far below
 * what would exhaust memory: a larger one is skipped with a note, and the hook still succeeds.
 */
export const MAX_HOOK_PAYLOAD_BYTES = 32 * 1024 * 1024;

/**
 * The hook's JSON, read from fd 0 directly: PostToolUse runs after every file tool, and creating
 * `process.stdin` (its stream and socket machinery) costs a hook about a tenth of a bare Node
 * start. `stalled` is set when the input did not end in time: the read left pending would keep
 * the process alive.
 */
const stdin = { stalled: false, oversized: false };
function readStdin(): Promise<string> {
  // A terminal (or /dev/null): nothing to wait for. Checked with fstat, not node:tty, which loads
  // the socket machinery this read avoids.
  if (fstatSync(0).isCharacterDevice()) return Promise.resolve("");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(64 * 1024);
    let total = 0;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(() => {
      stdin.stalled = true;
      finish();
    }, STDIN_TIMEOUT_MS);
    const next = (): void =>
      read(0, buffer, 0, buffer.length, null, (error, bytes) => {
        if (settled) return;
        if (error?.code === "EAGAIN") return void setTimeout(next, 2);
        if (error || bytes === 0) return finish();
        total += bytes;
        if (total > MAX_HOOK_PAYLOAD_BYTES) {
          // Stop reading: the rest is never needed, and the writer is told by the closed pipe.
          stdin.oversized = true;
          chunks.length = 0;
          return finish();
        }
        chunks.push(Buffer.from(buffer.subarray(0, bytes)));
        next();
      });
    next();
  });
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [name, ...rest] = argv;
  if (!HOOK_NAMES.includes(name as HookName) || rest.length > 0) {
    // Exit 1, not the usual usage code 2: to Claude Code, exit 2 means "block" (compaction, tools).
    process.stderr.write(
      `arbeit: ${name ? `unknown hook ${JSON.stringify(argv.join(" "))}` : "name a hook"}\n${USAGE}`,
    );
    return 1;
  }
  const payload = await readStdin();
  if (stdin.oversized) {
    process.stderr.write(
      `arbeit: the ${name} hook's input is over ${MAX_HOOK_PAYLOAD_BYTES / (1024 * 1024)} MiB; skipped it (nothing recorded).\n`,
    );
    // The unread rest of the input must not keep the process waiting.
    process.exit(0);
  }
  const settings = {
    db: options.db ?? process.env.ARBEIT_DB,
    agent: options.agent ?? envSetting(process.env, "ARBEIT_AGENT"),
    list: options.list ?? envSetting(process.env, "ARBEIT_LIST"),
  };
  // PreToolUse runs before every file tool and Arbeit MCP call: its quick path loads neither the
  // store nor the service (src/claude/pre-tool-use.ts); the full hooks load only when needed.
  let outcome: HookOutcome | undefined;
  if (name === "pre-tool-use")
    outcome = await (await import("../claude/pre-tool-use.js")).quickPreToolUse(payload, settings);
  outcome ??= await (await import("../claude/hooks.js")).runClaudeHook(name as HookName, payload, settings);
  // Claude Code shows a hook's stderr to the person; the note may quote a path or a message.
  // Written straight to the descriptors: a hook that has nothing to say builds no stream.
  if (outcome.stderr) write(2, terminalSafe(outcome.stderr, { newlines: true }));
  if (outcome.stdout) write(1, outcome.stdout);
  // A read left pending on a stalled input would keep the process alive.
  if (stdin.stalled) process.exit(0);
  return 0;
}
