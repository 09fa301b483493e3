import { dirname } from "node:path";
import { subagentSession, takeSubagentCall } from "../claude/subagent-calls.js";
import { heartbeatSeconds } from "../domain/claims.js";
import type { Envelope } from "../domain/envelope.js";
import { newId } from "../domain/ids.js";
import { Heartbeat } from "../remote/heartbeat.js";
import { localRunner, remoteRunner, type StepRunner } from "../remote/steps.js";
import { serviceTarget } from "../remote/target.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { locate, openProject } from "../service/project.js";
import type { ToolContext, ToolDef } from "../tools/define.js";
import { failure, invokeTool } from "../tools/envelope.js";

export interface ConnectionOptions {
  cwd: string;
  /** --db / ARBEIT_DB. */
  db?: string | undefined;
  /** --session / ARBEIT_SESSION; otherwise one fresh session per connection. */
  session?: string | undefined;
  /** --agent / ARBEIT_AGENT; otherwise the client's name from the initialize handshake. */
  agent?: string | undefined;
  /** --list / ARBEIT_LIST. */
  listId?: string | undefined;
  /**
   * Seconds of the conversation's heartbeat (ARBEIT_HEARTBEAT_SECONDS; 0: none): while the
   * connection is open, the claims of every session it acted as stay held however long a tool
   * call runs; `close()` lets them lapse at once. None unless given: a library user's connection
   * does not live as long as a conversation.
   */
  heartbeatSeconds?: number | undefined;
}

/** What one MCP connection needs per call: who is calling and the project's service. */
export interface Connection {
  readonly session: string;
  /** `toolUseId`: Claude Code's id of the call (`_meta["claudecode/toolUseId"]`), if any. */
  context(clientName: string | undefined, toolUseId?: unknown): ToolContext;
  /**
   * Runs one call in `ctx`: on the project's store, or, in a checkout that points at an `arbeit
   * serve` service, as one request to it, in the connection's session (docs/team.md).
   */
  call(tool: ToolDef, args: unknown, ctx: ToolContext): Promise<Envelope>;
  close(): Promise<void>;
}

/** The heartbeat length `arbeit mcp` uses, from ARBEIT_HEARTBEAT_SECONDS (default one minute). */
export function connectionHeartbeat(env: NodeJS.ProcessEnv = process.env): number {
  return heartbeatSeconds(env.ARBEIT_HEARTBEAT_SECONDS);
}

/** Tools after which the session may hold a claim or reservation taken with a longer lease. */
const CLAIMING = new Set(["arbeit_task_claim", "arbeit_task_start_work", "arbeit_batch"]);

/** A session id for a connection that was not given one: "mcp-" + 8 lowercase alphanumerics. */
export function connectionSession(): string {
  return newId("session").replace(/^ses-/, "mcp-");
}

/**
 * The service is opened on the first call and kept for the connection. A failed open (no
 * `.arbeit/` yet) is not remembered, so the call after arbeit_init succeeds.
 */
export function openConnection(options: ConnectionOptions): Connection {
  const session = options.session ?? connectionSession();
  let service: Promise<ArbeitService> | undefined;
  const open = (): Promise<ArbeitService> => {
    if (!service) {
      const opening = openProject({ cwd: options.cwd, db: options.db });
      service = opening;
      opening.catch(() => {
        if (service === opening) service = undefined;
      });
    }
    return service;
  };
  // Where the heartbeat's steps run: the service the checkout points at, else the local store
  // (none until the project has one).
  const steps = async (): Promise<StepRunner | undefined> => {
    const remote = serviceTarget({ cwd: options.cwd, db: options.db });
    if (remote) return remoteRunner(remote, process.env, options.listId);
    if (!service && !locate({ cwd: options.cwd, db: options.db })) return undefined;
    return localRunner(open, { agent: options.agent ?? "mcp", ...(options.listId ? { list_id: options.listId } : {}) });
  };
  const heartbeat = new Heartbeat(options.heartbeatSeconds ?? 0, steps, (error) =>
    process.stderr.write(`arbeit mcp: heartbeat failed: ${error instanceof Error ? error.message : String(error)}\n`),
  );
  // The connection's own session from the start: it may hold claims taken outside this server
  // (a hook, the CLI) while the conversation lives.
  heartbeat.keep({ session });
  const beatFor = (tool: ToolDef, ctx: ToolContext) => {
    const { session: who, parents } = ctx.caller;
    heartbeat.keep({ session: who, ...(parents?.length ? { parents } : {}) }, CLAIMING.has(tool.name));
  };
  return {
    session,
    context(clientName, toolUseId) {
      // A Claude Code sub-agent's call acts as the sub-agent's own session (src/claude/subagent-calls.ts).
      const location = toolUseId === undefined ? undefined : locate({ cwd: options.cwd, db: options.db });
      const subagent = location && takeSubagentCall(dirname(location.dbPath), toolUseId);
      const caller: Caller = {
        ...(subagent ? { session: subagentSession(session, subagent), parents: [session] } : { session }),
        agent: options.agent ?? clientName ?? "mcp",
        ...(options.listId ? { list_id: options.listId } : {}),
      };
      return { caller, cwd: options.cwd, db: options.db, service: open };
    },
    async call(tool, args, ctx) {
      let remote: ReturnType<typeof serviceTarget>;
      try {
        // Read per call, as the store is opened on first use: arbeit_init may run in between.
        remote = serviceTarget({ cwd: options.cwd, db: options.db });
      } catch (error) {
        return failure(error);
      }
      try {
        if (!remote) return await invokeTool(tool, args, ctx);
        const { remoteCall } = await import("../remote/call.js");
        return await remoteCall(remote, tool.name, args, {
          session: ctx.caller.session ?? undefined,
          parents: ctx.caller.parents,
          list: options.listId,
        });
      } finally {
        beatFor(tool, ctx);
      }
    },
    async close() {
      await heartbeat.end();
      const opened = await service?.catch(() => undefined);
      service = undefined;
      await opened?.close();
    },
  };
}
