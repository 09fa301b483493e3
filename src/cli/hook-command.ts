import { HOOK_NAMES, type HookName, runClaudeHook } from "../claude/hooks.js";
import { envSetting, type GlobalOptions } from "./global-options.js";

const USAGE = `Usage: arbeit hook <${HOOK_NAMES.join(" | ")}>

Claude Code command hooks: read the hook's JSON on stdin (arbeit setup claude configures them).
  session-start   prints the session's task briefing as SessionStart additionalContext
  post-tool-use   records Read/Write/Edit/MultiEdit/NotebookEdit files against the active task
  pre-compact     prints the active task's briefing for the compaction summary
Arbeit-side problems never fail the hook: they are noted on stderr and the exit code stays 0.
`;

/** Claude Code always sends a payload and closes stdin; never wait forever for one that doesn't. */
const STDIN_TIMEOUT_MS = 5_000;

function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve("");
  return new Promise((resolve) => {
    let data = "";
    const done = () => {
      clearTimeout(timer);
      process.stdin.pause();
      resolve(data);
    };
    const timer = setTimeout(done, STDIN_TIMEOUT_MS);
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk) => (data += chunk));
    process.stdin.on("end", done);
    process.stdin.on("error", done);
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
  const outcome = await runClaudeHook(name as HookName, await readStdin(), {
    db: options.db ?? process.env.ARBEIT_DB,
    agent: options.agent ?? envSetting(process.env, "ARBEIT_AGENT"),
    list: options.list ?? envSetting(process.env, "ARBEIT_LIST"),
  });
  process.stdout.write(outcome.stdout);
  process.stderr.write(outcome.stderr);
  return 0;
}
