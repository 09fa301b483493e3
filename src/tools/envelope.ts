import type { Envelope } from "../domain/envelope.js";
import { ArbeitError } from "../domain/errors.js";
import { inputDepthError } from "../schemas/input-depth.js";
import { fromZodError } from "../schemas/zod-errors.js";
import type { ToolContext, ToolDef } from "./define.js";
import { runIdempotent, successEnvelope } from "./idempotency.js";

export type { Envelope };

/**
 * Anything thrown that is not an ArbeitError is a bug: report it as INTERNAL_ERROR. Failures of
 * the machine (disk full, no permission) are named by the store that met them, with its path.
 */
export function toArbeitError(error: unknown): ArbeitError {
  if (error instanceof ArbeitError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ArbeitError("INTERNAL_ERROR", `Unexpected failure: ${message}`);
}

export function failure(error: unknown): Envelope<never> {
  return { success: false, error: toArbeitError(error).toBody() };
}

/** Validates `args` against the tool's schema and runs it; never throws. */
export async function invokeTool(tool: ToolDef, args: unknown, ctx: ToolContext): Promise<Envelope> {
  const tooDeep = inputDepthError(args);
  if (tooDeep) return failure(tooDeep);
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return failure(fromZodError(parsed.error));
  try {
    // A `session` argument (where a tool has one) replaces the host's session for this call only.
    const { session, request_id, ...rest } = parsed.data as { session?: string; request_id?: string };
    const callCtx = session === undefined ? ctx : { ...ctx, caller: { ...ctx.caller, session } };
    if (request_id !== undefined) return await runIdempotent(tool, rest, request_id, callCtx);
    return successEnvelope(await tool.run(callCtx, rest));
  } catch (error) {
    return failure(error);
  }
}
