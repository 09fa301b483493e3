import { dirname } from "node:path";
import { activeBriefingText } from "../fragments/briefing-text.js";
import { lastWorkedOnText, sessionStartContext } from "../fragments/session-start.js";
import { serviceTarget } from "../remote/target.js";
import { pathDeeperThan } from "../schemas/json-size.js";
import { LIMITS } from "../schemas/limits.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { readCommit } from "../service/git-commit.js";
import { isNoUsableStore, locate, openProject } from "../service/project.js";
import type { NewsItem } from "../service/session-news.js";
import { committedSha } from "./git-commit.js";
import { type HookPayload, isRow, parsePayload, projectDirOf, text, touchFromPostToolUse } from "./hook-payload.js";
import { collectMemory } from "./memory-gc.js";
import { noteSubagentCall, subagentSession } from "./subagent-calls.js";

/**
 * Claude Code command hooks (`arbeit hook <name>`, stdin JSON). A hook must never break the
 * user's session: every Arbeit-side problem becomes a note on stderr with exit 0, and a project
 * without Arbeit gets no output at all.
 */

export const HOOK_NAMES = [
  "session-start",
  "user-prompt-submit",
  "pre-tool-use",
  "post-tool-use",
  "post-tool-use-failure",
  "subagent-start",
  "subagent-stop",
  "pre-compact",
  "post-compact",
  "session-end",
] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface HookSettings {
  /** --db / ARBEIT_DB. */
  db?: string | undefined;
  /** --agent / ARBEIT_AGENT; Claude Code by default. */
  agent?: string | undefined;
  /** --list / ARBEIT_LIST. */
  list?: string | undefined;
}

export interface HookOutcome {
  stdout: string;
  stderr: string;
}

export const CLAUDE_AGENT = "claude-code";
/** A prompt is logged for the task's history, not kept whole: a pasted log can run to megabytes. */
export const PROMPT_CHARS = 2_000;

type Handler = (service: ArbeitService, payload: HookPayload, caller: Caller, dir: string) => Promise<string>;

/** The JSON that gives the model extra context; `hookEventName` is required or Claude Code drops it. */
const additionalContext = (hookEventName: string, context: string) =>
  `${JSON.stringify({ hookSpecificOutput: { hookEventName, additionalContext: context } })}\n`;

/** News for the model, one line each, a person's answers first; nothing when there is none. */
function newsContext(hookEventName: string, news: ReadonlyArray<NewsItem>): string {
  if (news.length === 0) return "";
  const ordered = [...news.filter((item) => item.answer), ...news.filter((item) => !item.answer)];
  const lines = ["Arbeit: news since this session last looked:", ...ordered.map((item) => `- ${item.text}`)];
  return additionalContext(hookEventName, lines.join("\n"));
}

/** What a failed call was asked to do, in a line: the command, the file, else its input. */
function callSummary(input: unknown): string | undefined {
  if (!isRow(input)) return undefined;
  return (
    text(input.command) ??
    text(input.file_path) ??
    text(input.notebook_path) ??
    text(input.url) ??
    // JSON.stringify recurses: an input nested thousands of levels deep would overflow the stack.
    (pathDeeperThan(input, LIMITS.input_depth)
      ? `(an input nested over ${LIMITS.input_depth} levels deep)`
      : JSON.stringify(input))
  );
}

const HANDLERS: Record<HookName, Handler> = {
  "session-start": async (service, _payload, caller) =>
    additionalContext("SessionStart", (await sessionStartContext(service, caller)).text),
  "user-prompt-submit": async (service, payload, caller) => {
    const { news } = (await service.sessionNews(caller)).data;
    const prompt = payload.prompt ?? "";
    // A background sub-agent's result comes back as a prompt; it is not the person's.
    if (!prompt.startsWith("<task-notification>")) {
      await service.recordSessionEvent(
        { event_type: "prompt_submitted", payload: { prompt: prompt.slice(0, PROMPT_CHARS), chars: prompt.length } },
        caller,
      );
    }
    return newsContext("UserPromptSubmit", news);
  },
  // Handled before the store is opened (see runClaudeHook): it only leaves a note for the server.
  "pre-tool-use": async () => "",
  "post-tool-use": async (service, payload, caller, dir) => {
    const sha = committedSha(payload);
    if (sha) {
      const commit = readCommit(payload.cwd ?? dir, sha, Date.now() - (payload.duration_ms ?? 0));
      if (commit) await service.recordCommit(commit, caller);
    } else {
      const touch = touchFromPostToolUse(payload, dir);
      if (touch && caller.session) await service.trackFile(touch, caller);
    }
    // After every tool call: a person's answer (or other news) reaches the model at its next step.
    // Read without the write lock; the cursor moves only when there is something to tell.
    if (!caller.session) return "";
    const { news } = (await service.sessionNews(caller, { advance: "when-told" })).data;
    return newsContext("PostToolUse", news);
  },
  "post-tool-use-failure": async (service, payload, caller) => {
    // An interruption is the person's choice, and a failed Arbeit call is answered to the agent already.
    if (payload.is_interrupt || !payload.tool_name || payload.tool_name.startsWith("mcp__arbeit__")) return "";
    await service.recordToolFailure(
      { tool: payload.tool_name, input: callSummary(payload.tool_input), error: payload.error ?? "(no error given)" },
      caller,
    );
    return "";
  },
  "subagent-start": async (service, payload, caller) => {
    await service.recordSessionEvent(
      { event_type: "subagent_started", payload: { agent_id: payload.agent_id, agent_type: payload.agent_type } },
      caller,
    );
    // SubagentStart context reaches that sub-agent only: the work it is helping with.
    const brief = caller.session ? await activeBriefingText(service, caller.session, caller.parents) : undefined;
    return brief ? additionalContext("SubagentStart", brief) : "";
  },
  "subagent-stop": async (service, payload, caller) => {
    // The agent that writes a compaction's summary stops without having started: not a sub-agent.
    if (!payload.agent_type) return "";
    const ended = (await service.endSession({ reason: "sub-agent stopped", stop: true }, caller)).data;
    await service.recordSessionEvent(
      {
        event_type: "subagent_stopped",
        payload: {
          agent_id: payload.agent_id,
          agent_type: payload.agent_type,
          ...(ended.task_id ? { stopped_work_on: ended.task_id } : {}),
        },
      },
      caller,
    );
    return "";
  },
  // PreCompact: plain stdout is appended to the compaction instructions.
  "pre-compact": async (service, _payload, caller) => {
    await collectMemory(service, caller);
    if (!caller.session) return "";
    // A `claude -p /compact` run compacts a conversation whose previous run ended (and stopped) its
    // work: the task it last worked on is still what the summary must keep.
    const text =
      (await activeBriefingText(service, caller.session)) ?? (await lastWorkedOnText(service, caller.session));
    return text ? `Preserve this task briefing in the summary.\n${text}\n` : "";
  },
  "post-compact": async (service, payload, caller) => {
    await service.recordSessionEvent(
      {
        event_type: "session_compacted",
        payload: { trigger: payload.trigger ?? null, summary_chars: payload.compact_summary?.length ?? 0 },
      },
      caller,
    );
    return "";
  },
  "session-end": async (service, payload, caller) => {
    const reason = payload.reason ?? "other";
    // Every end stops the work and hands the claim back, `claude -p`'s end of each run (`other`)
    // included: a run that is never resumed must not hold the task for the lease's length. A
    // `--resume` is briefed on the task it last worked on, with the call that starts it again.
    await service.endSession({ reason, stop: true }, caller);
    await collectMemory(service, caller);
    return "";
  },
};

/**
 * The conversation's session is Claude Code's session id, the same as CLAUDE_CODE_SESSION_ID in
 * the MCP server it starts, so hooks and MCP calls of one conversation are one session. A
 * sub-agent's tool calls carry its agent_id (and the parent's session_id): they act as a session
 * of their own, `<session>/<agent_id>`, which records against the parent's task while it has no
 * work of its own.
 */
export function hookSession(payload: HookPayload): Pick<Caller, "session" | "parents"> {
  const session = payload.session_id ?? null;
  if (session === null || payload.agent_id === undefined) return { session };
  return { session: subagentSession(session, payload.agent_id), parents: [session] };
}

export async function runClaudeHook(
  name: HookName,
  input: string,
  settings: HookSettings,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<HookOutcome> {
  let service: ArbeitService | undefined;
  try {
    const payload = parsePayload(input);
    const dir = projectDirOf(payload, env, cwd);
    const where = { cwd: dir, db: settings.db };
    const location = locate(where);
    if (!location) return { stdout: "", stderr: "" };
    if (name === "pre-tool-use") {
      // Runs before every Arbeit MCP call: it opens no database, only notes a sub-agent's call.
      if (payload.agent_id && payload.tool_use_id)
        noteSubagentCall(dirname(location.dbPath), payload.tool_use_id, payload.agent_id);
      return { stdout: "", stderr: "" };
    }
    // The hooks do not go through a service yet: a process pointed at one (ARBEIT_URL) stays
    // silent rather than answer from a local store its tool calls do not use.
    if (serviceTarget(where, env)) return { stdout: "", stderr: "" };
    service = await openProject(where);
    const caller: Caller = {
      ...hookSession(payload),
      agent: settings.agent ?? CLAUDE_AGENT,
      ...(settings.list ? { list_id: settings.list } : {}),
    };
    return { stdout: await HANDLERS[name](service, payload, caller, dir), stderr: "" };
  } catch (error) {
    if (isNoUsableStore(error)) return { stdout: "", stderr: "" };
    const message = error instanceof Error ? error.message : String(error);
    return { stdout: "", stderr: `arbeit: ${name} hook skipped: ${message}\n` };
  } finally {
    await service?.close().catch(() => undefined);
  }
}
