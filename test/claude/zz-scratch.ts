import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI } from "../helpers/cli.js";
import { createSandbox, REPO, runClaude } from "./claude-harness.js";
import {
  lastUserText,
  type MessagesRequest,
  startFakeAnthropic,
  type Turn,
  textOf,
  toolResults,
} from "./fake-anthropic.js";

const sb = createSandbox();
const p = sb.project;
const env = { ...process.env, HOME: sb.home, npm_config_update_notifier: "false" };
execFileSync("npm", ["install", "--save-dev", REPO, "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
  cwd: p,
  env,
  stdio: "inherit",
});
const cli = (...a: string[]) => execFileSync(process.execPath, [CLI, ...a], { cwd: p, encoding: "utf8", env });
console.log(cli("init"));
console.log(cli("setup", "claude"));
const t1 = JSON.parse(
  cli(
    "call",
    "arbeit_task_create",
    JSON.stringify({
      title: "Add rate limiting",
      type: "feature",
      intent: "INTENT-MARK keep abusers out",
      description: "DESC",
      plan: "PLAN-MARK 1. token bucket 2. tests",
    }),
  ),
).data.task.id;
writeFileSync(join(p, "other.txt"), "other\n");
const id = 0;
const fake = await startFakeAnthropic((r: MessagesRequest): Turn => {
  const done = toolResults(r);
  if (/detailed summary of the conversation/i.test(lastUserText(r))) return { text: "SUMMARY-MARKER" };
  const conv = r.messages.map((m) => textOf(m.content)).join("\n");
  const call = (i: string, name: string, input: any): Turn => ({ tools: [{ id: i, name, input }] });
  if (conv.includes("AFTER-COMPACT")) return { text: "AFTER-DONE" };
  if (conv.includes("RESUME-PROMPT")) return { text: "RESUME-DONE" };
  if (conv.includes("WORK-PROMPT")) {
    if (!done.has("toolu_start")) return call("toolu_start", "mcp__arbeit__arbeit_task_start_work", { task_id: t1 });
    if (!done.has("toolu_write"))
      return call("toolu_write", "Write", { file_path: join(p, "src.txt"), content: "a\n" });
    if (!done.has("toolu_edit"))
      return call("toolu_edit", "Edit", { file_path: join(p, "src.txt"), old_string: "a", new_string: "b" });
    if (!done.has("toolu_read")) return call("toolu_read", "Read", { file_path: join(p, "other.txt") });
    return { text: "WORK-DONE" };
  }
  return { text: "OK" };
});
let sid: string | undefined;
for (const [name, prompt] of [
  ["work", "WORK-PROMPT"],
  ["resume", "RESUME-PROMPT"],
  ["compact", "/compact"],
  ["after", "AFTER-COMPACT"],
]) {
  const before = fake.requests.length;
  const t0 = Date.now();
  const run = await runClaude({
    sandbox: sb,
    baseUrl: fake.baseUrl,
    prompt: prompt!,
    resume: sid,
    allowedTools: ["Read", "Write", "Edit", "mcp__arbeit__*"],
  });
  sid ??= run.sessionId;
  console.log(
    name,
    run.code,
    Date.now() - t0,
    "ms",
    run.result?.result,
    JSON.stringify(run.result?.permission_denials),
  );
  writeFileSync(`/tmp/explore/${name}.events.json`, JSON.stringify(run.events, null, 1));
  writeFileSync(`/tmp/explore/${name}.requests.json`, JSON.stringify(fake.requests.slice(before), null, 1));
  writeFileSync(`/tmp/explore/${name}.stderr`, run.stderr);
  if (name === "compact") console.log(cli("call", "arbeit_context_add", JSON.stringify({ task_id: t1, type: "note", content: "NOTE-AFTER-COMPACT" })));
}
console.log(cli("call", "arbeit_task_get", JSON.stringify({ task_id: t1, include: ["files", "sessions"] })));
console.log(cli("query", "events", "--json"));
await fake.close();
console.log(sb.root);
