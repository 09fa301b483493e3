import { fromDirectory } from "../domain/paths.js";
import type { FileOperation } from "../domain/types.js";

/**
 * What Claude Code sends a command hook on stdin (docs/claude-code.md): the fields Arbeit reads. Anything
 * else is ignored, and a missing field means "nothing to do", never an error.
 */
export interface HookPayload {
  session_id?: string;
  cwd?: string;
  hook_event_name?: string;
  /** SessionStart: startup | resume | clear | compact. */
  source?: string;
  tool_name?: string;
  tool_input?: unknown;
  /**
   * Set on a tool call a sub-agent (the Agent tool) made; its session_id is its parent's. Main
   * conversation calls have none.
   */
  agent_id?: string;
  /** PreToolUse / PostToolUse: the call's id, which an MCP server also receives in `_meta`. */
  tool_use_id?: string;
  /** PostToolUse: for Bash `{stdout, stderr, interrupted}`. */
  tool_response?: unknown;
  /** PostToolUse: how long the call took. */
  duration_ms?: number;
  /** SubagentStart / SubagentStop; empty for the agent that writes a compaction's summary. */
  agent_type?: string;
  /** UserPromptSubmit. */
  prompt?: string;
  /** PostToolUseFailure: the error, and whether the person interrupted the call. */
  error?: string;
  is_interrupt?: boolean;
  /** SessionEnd: clear | logout | prompt_input_exit | other ... */
  reason?: string;
  /** PreCompact / PostCompact: manual | auto. */
  trigger?: string;
  /** PostCompact. */
  compact_summary?: string;
  /** TaskCreated / TaskCompleted: the id and subject of a task of Claude Code's own task list. */
  task_id?: string;
  task_subject?: string;
}

export class HookInputError extends Error {}

type Row = Record<string, unknown>;
export const isRow = (value: unknown): value is Row =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

export function parsePayload(input: string): HookPayload {
  if (input.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch {
    throw new HookInputError("the hook input on stdin is not JSON");
  }
  if (!isRow(value)) throw new HookInputError("the hook input on stdin is not a JSON object");
  return {
    session_id: text(value.session_id),
    cwd: text(value.cwd),
    hook_event_name: text(value.hook_event_name),
    source: text(value.source),
    tool_name: text(value.tool_name),
    tool_input: value.tool_input,
    agent_id: text(value.agent_id),
    tool_use_id: text(value.tool_use_id),
    tool_response: value.tool_response,
    duration_ms: typeof value.duration_ms === "number" ? value.duration_ms : undefined,
    agent_type: typeof value.agent_type === "string" ? value.agent_type : undefined,
    prompt: text(value.prompt),
    error: text(value.error),
    is_interrupt: value.is_interrupt === true,
    reason: text(value.reason),
    trigger: text(value.trigger),
    compact_summary: text(value.compact_summary),
    task_id: text(value.task_id),
    task_subject: text(value.task_subject),
  };
}

/** Hooks run in the project Claude Code was started in: CLAUDE_PROJECT_DIR, else the payload's cwd. */
export function projectDirOf(payload: HookPayload, env: NodeJS.ProcessEnv, fallback: string): string {
  return text(env.CLAUDE_PROJECT_DIR) ?? payload.cwd ?? fallback;
}

/** Claude Code's file tools and the input field naming their file. */
const FILE_TOOLS: Record<string, { field: string; operation: FileOperation }> = {
  Read: { field: "file_path", operation: "read" },
  Write: { field: "file_path", operation: "write" },
  Edit: { field: "file_path", operation: "write" },
  MultiEdit: { field: "file_path", operation: "write" },
  NotebookEdit: { field: "notebook_path", operation: "write" },
};

/**
 * The file a PostToolUse call touched, as an absolute path (relative ones are taken from cwd,
 * their `..` left for trackFile to apply after it has followed symlinks).
 */
export function touchFromPostToolUse(
  payload: HookPayload,
  baseDir: string,
): { path: string; operation: FileOperation } | undefined {
  const spec = payload.tool_name ? FILE_TOOLS[payload.tool_name] : undefined;
  if (!spec || !isRow(payload.tool_input)) return undefined;
  const path = text(payload.tool_input[spec.field]);
  if (!path) return undefined;
  return { path: fromDirectory(payload.cwd ?? baseDir, path), operation: spec.operation };
}

/** A step of Claude Code's own task list, in the shape the store step mirrors (src/service/host-steps.ts). */
export interface ListedStep {
  key?: string;
  content?: string;
  status: string;
}

/**
 * The key of a task of Claude Code's task list: its id, which counts from 1 in each session's
 * list, with the session's id.
 */
export const hostTaskKey = (session: string | undefined, id: string) => `claude-code:${session ?? "-"}:${id}`;

/**
 * The steps a PostToolUse call of Claude Code's task tools changed: TaskCreate's new task (its id
 * is in the response), TaskUpdate's task by id (a new subject or status), TodoWrite's whole list
 * (older versions, or CLAUDE_CODE_ENABLE_TASKS=0; its todos have no id). Undefined for any other tool.
 */
export function stepsFromPostToolUse(payload: HookPayload): ListedStep[] | undefined {
  const input = isRow(payload.tool_input) ? payload.tool_input : {};
  const response = isRow(payload.tool_response) ? payload.tool_response : {};
  switch (payload.tool_name) {
    case "TaskCreate": {
      const id = isRow(response.task) ? text(response.task.id) : undefined;
      const subject = text(input.subject);
      if (!id || !subject) return [];
      return [{ key: hostTaskKey(payload.session_id, id), content: subject, status: "pending" }];
    }
    case "TaskUpdate": {
      const id = text(input.taskId);
      if (!id) return [];
      const subject = text(input.subject);
      return [
        {
          key: hostTaskKey(payload.session_id, id),
          ...(subject ? { content: subject } : {}),
          status: text(input.status) ?? "pending",
        },
      ];
    }
    case "TodoWrite": {
      const todos = Array.isArray(input.todos) ? input.todos : [];
      return todos.flatMap((todo: unknown) =>
        isRow(todo) && text(todo.content) && text(todo.status)
          ? [{ content: text(todo.content)!, status: text(todo.status)! }]
          : [],
      );
    }
    default:
      return undefined;
  }
}

/**
 * The plan an ExitPlanMode call presented and the person approved (PostToolUse fires only then).
 * A sub-agent's plan (`isAgent`) is approved without asking anyone: it goes back to its parent,
 * whose own approved plan is the one that counts.
 */
export function planFromPostToolUse(payload: HookPayload): string | undefined {
  if (payload.tool_name !== "ExitPlanMode") return undefined;
  const response = isRow(payload.tool_response) ? payload.tool_response : {};
  if (response.isAgent === true) return undefined;
  const input = isRow(payload.tool_input) ? payload.tool_input : {};
  return text(response.plan)?.trim() ? text(response.plan) : text(input.plan);
}
