import { ArbeitError } from "../domain/errors.js";
import type { Result } from "../service/deps.js";
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

async function hashArgs(tool: string, args: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([tool, canonical(args)]));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Buffer.from(digest).toString("hex");
}

/**
 * Runs a mutating call at most once per (agent, request_id) (DESIGN §5). The first successful
 * response is stored in the same transaction as the writes it describes, so a crash can never
 * keep one without the other; a repeat replays it and writes nothing. Failed calls store
 * nothing (their writes were rolled back), so a retry after a failure runs again.
 */
export async function runIdempotent(
  tool: ToolDef,
  args: Record<string, unknown>,
  requestId: string,
  ctx: ToolContext,
): Promise<SuccessEnvelope> {
  const service = await ctx.service();
  const agent = ctx.caller.agent ?? "";
  const argsHash = await hashArgs(tool.name, args);
  return service.store.write(async (tx) => {
    const prior = await tx.getIdempotent(agent, requestId);
    if (prior) {
      if (prior.tool !== tool.name || prior.args_hash !== argsHash) {
        throw new ArbeitError(
          "INVALID_ARGUMENT",
          `request_id ${JSON.stringify(requestId)} was already used for a different call (${prior.tool}).`,
          {
            suggestions: ["Use a fresh request_id for each distinct call; reuse it only to retry the very same call."],
            details: { request_id: requestId, original_tool: prior.tool },
          },
        );
      }
      return JSON.parse(prior.response) as SuccessEnvelope;
    }
    const envelope = successEnvelope(await tool.run(ctx, args));
    await tx.putIdempotent({
      agent,
      request_id: requestId,
      tool: tool.name,
      args_hash: argsHash,
      response: JSON.stringify(envelope),
      created_at: new Date().toISOString(),
    });
    return envelope;
  });
}
