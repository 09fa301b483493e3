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

/** Every tool, in the order front ends list them. Adding a tool here adds it everywhere. */
export const TOOLS: readonly ToolDef[] = [
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
] as unknown as readonly ToolDef[];

const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

export function findTool(name: string): ToolDef | undefined {
  return BY_NAME.get(name);
}

export const TOOL_NAMES = TOOLS.map((tool) => tool.name);
