/**
 * Arbeit's tools for the Vercel AI SDK (`ai` v7), generated from the tool catalogue. Every tool's
 * `execute` runs the same invokeTool as the CLI and MCP server and returns the envelope
 * `{success, data?, warnings?, error?}`, so the model sees our error codes and advice.
 *
 *   const arbeit = await openArbeit();
 *   const result = await generateText({
 *     model,
 *     tools: createArbeitTools(arbeit, { agent: "planner" }),
 *     stopWhen: isStepCount(10),
 *     prompt: "Plan the login rework as tasks.",
 *   });
 *
 * `arbeit_init` is left out: the tools run on a store that is already open, so there is nothing
 * to initialise (open the project with `openArbeit({ create: true })` instead).
 */
import { newId } from "../domain/ids.js";
import { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import type { TaskStore } from "../store/task-store.js";
import { TOOLS } from "../tools/catalogue.js";
import type { ToolContext } from "../tools/define.js";
import { type Envelope, invokeTool } from "../tools/envelope.js";
import { type PassthroughSchema, passthroughSchema } from "./passthrough-schema.js";

export interface ArbeitToolsOptions {
  /** Scopes reads and is the default list for new tasks. */
  listId?: string;
  /** Who is acting, recorded on events and session links. Default "ai-sdk". */
  agent?: string;
  /** The conversation work is linked to. Default: one fresh `ai-<random>` id per call of createArbeitTools. */
  session?: string;
  /** Project root for file paths, when given a bare TaskStore. Default: the service's root, else the cwd. */
  projectRoot?: string;
}

/** One tool as the AI SDK's `tool()` would build it; assignable to `ai`'s `ToolSet` entries. */
export interface ArbeitAiTool {
  title: string;
  description: string;
  inputSchema: PassthroughSchema;
  execute(input: unknown, options?: { abortSignal?: AbortSignal }): Promise<Envelope>;
}

/** Tools keyed by their catalogue names (`arbeit_task_create`, ...). Pass it as `tools`. */
export type ArbeitToolSet = Record<string, ArbeitAiTool>;

/** By shape rather than instanceof, so a service from another copy of the package still counts. */
function isService(value: TaskStore | ArbeitService): value is ArbeitService {
  return typeof (value as ArbeitService).createTask === "function";
}

/** Tools that make no sense on a store someone already opened. */
const NOT_FOR_OPEN_STORES = new Set(["arbeit_init"]);

export function createArbeitTools(store: TaskStore | ArbeitService, options: ArbeitToolsOptions = {}): ArbeitToolSet {
  const service = isService(store)
    ? store
    : new ArbeitService(store, { projectRoot: options.projectRoot ?? process.cwd() });
  const caller: Caller = {
    session: options.session ?? newId("session").replace(/^ses-/, "ai-"),
    agent: options.agent ?? "ai-sdk",
    ...(options.listId ? { list_id: options.listId } : {}),
  };
  const ctx: ToolContext = { caller, cwd: service.projectRoot, service: async () => service };
  const tools: ArbeitToolSet = {};
  for (const tool of TOOLS) {
    if (NOT_FOR_OPEN_STORES.has(tool.name)) continue;
    tools[tool.name] = {
      title: tool.title,
      description: tool.description,
      inputSchema: passthroughSchema(tool),
      execute: (input) => invokeTool(tool, input, ctx),
    };
  }
  return tools;
}
