import type { Result } from "../service/operation.js";
import type { ToolContext, ToolDef } from "./define.js";

/** The envelope of a successful call; shared with envelope.ts so a replay is identical. */
export type SuccessEnvelope = { success: true; data: unknown; warnings?: Result<unknown>["warnings"] };

export function successEnvelope(result: Result<unknown>): SuccessEnvelope {
  return result.warnings.length > 0
    ? { success: true, data: result.data, warnings: result.warnings }
    : { success: true, data: result.data };
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** The hash a request id is bound to: the same id with other arguments is refused. */
export async function hashArgs(tool: string, args: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([tool, canonical(args)]));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Buffer.from(digest).toString("hex");
}

/** A mutating call with a request_id: run through the service at most once (see ArbeitService.once). */
export async function runIdempotent(
  tool: ToolDef,
  args: Record<string, unknown>,
  requestId: string,
  ctx: ToolContext,
): Promise<SuccessEnvelope> {
  const service = await ctx.service();
  const key = { tool: tool.name, request_id: requestId, args_hash: await hashArgs(tool.name, args) };
  return service.once(ctx.caller, key, async () => successEnvelope(await tool.run(ctx, args)));
}
