import { requestId } from "../schemas/common.js";
import { lazyProperty } from "../schemas/lazy.js";
import { claim, memory, resume } from "./agent-tools.js";
import { batchTool } from "./batch-tool.js";
import type { ToolDef } from "./define.js";
import { taskCreate, taskDelete, taskGet, taskUpdate } from "./task-tools.js";
import {
  contextAdd,
  init,
  progressAdd,
  progressComplete,
  query,
  relationship,
  startWork,
  stopWork,
} from "./work-tools.js";

/** Whether the tool takes a request_id: every tool that writes, but init, which runs before a store exists. */
export function takesRequestId(tool: ToolDef): boolean {
  return !tool.annotations.readOnlyHint && tool.name !== init.name;
}

/**
 * Mutating tools take an optional request_id. It is added here, once, so that no
 * tool can forget it; invokeTool turns a repeat into a replay of the first response.
 */
function withRequestId(tool: ToolDef): ToolDef {
  if (!takesRequestId(tool)) return tool;
  return lazyProperty(tool, "input", () =>
    tool.input.extend({ request_id: requestId.optional().describe("Idempotency key") }),
  ) as ToolDef;
}

/** Every tool, in the order front ends list them. Adding a tool here adds it everywhere. */
export const TOOLS: readonly ToolDef[] = (
  [
    init,
    taskCreate,
    taskGet,
    taskUpdate,
    taskDelete,
    startWork,
    stopWork,
    contextAdd,
    progressAdd,
    progressComplete,
    relationship,
    query,
    claim,
    resume,
    memory,
    batchTool(() => TOOLS),
  ] as unknown as ToolDef[]
).map(withRequestId);

const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

export function findTool(name: string): ToolDef | undefined {
  return BY_NAME.get(name);
}

export const TOOL_NAMES = TOOLS.map((tool) => tool.name);
