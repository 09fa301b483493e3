import type { ArbeitService } from "../service/arbeit-service.js";
import { callRefusal, sessionRefusal, type Token, type ToolFacts, tokenCaller } from "../team/token-rules.js";
import { findTool } from "../tools/catalogue.js";
import type { ToolDef } from "../tools/define.js";
import { type Envelope, failure, invokeTool } from "../tools/envelope.js";
import type { SessionOwners } from "./session-owners.js";

/** Where the service runs tools: its one open store, and the directory paths resolve against. */
export interface ServiceContext {
  service: ArbeitService;
  cwd: string;
  db: string | undefined;
}

/** A ServiceContext with the sessions' owners it checks callers against. */
export interface CallContext extends ServiceContext {
  sessions: SessionOwners;
}

const facts = (tool: ToolDef): ToolFacts => ({ name: tool.name, readOnly: tool.annotations.readOnlyHint });
const lookup = (name: string): ToolFacts | undefined => {
  const tool = findTool(name);
  return tool && facts(tool);
};

/**
 * One call of `tool` made with `token`, in the session the caller chose (or its agent's own):
 * the token's rules first (docs/team.md), then the tool exactly as every front end runs it.
 */
export async function callWithToken(
  context: CallContext,
  token: Token,
  tool: ToolDef,
  args: unknown,
  session: string | undefined,
): Promise<Envelope> {
  const refusal =
    (session === undefined ? undefined : sessionRefusal(token, session)) ??
    callRefusal(token, facts(tool), args, lookup);
  if (refusal) return failure(refusal);
  // A session argument of the tool's own replaces the chosen one for this call (as invokeTool does).
  const own = (args as { session?: unknown } | null)?.session;
  const acting = typeof own === "string" ? own : session;
  if (acting !== undefined && !acting.startsWith("agent:")) {
    const taken = await context.sessions.refusal(token, acting).catch((error: unknown) => error);
    if (taken) return failure(taken);
  }
  return invokeTool(tool, args, {
    caller: tokenCaller(token, session),
    cwd: context.cwd,
    db: context.db,
    service: async () => context.service,
  });
}
