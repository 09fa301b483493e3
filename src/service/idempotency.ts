import { ArbeitError } from "../domain/errors.js";
import { agentSession } from "../domain/identity.js";
import type { Caller } from "./caller.js";
import type { ServiceDeps } from "./operation.js";

export interface RequestKey {
  tool: string;
  request_id: string;
  /** A hash of the call's arguments: the same id with other arguments is refused. */
  args_hash: string;
}

/**
 * Runs a mutating call at most once per (session, list, request_id): two sessions, or one session
 * in two lists, may use the same id without ever seeing each other's results. The first successful response is
 * stored in the same transaction as the writes it describes, so a crash can never keep one
 * without the other; a repeat replays it and writes nothing. Failed calls store nothing (their
 * writes were rolled back), so a retry after a failure runs again.
 */
export function runOnce<T>(deps: ServiceDeps, caller: Caller, key: RequestKey, run: () => Promise<T>): Promise<T> {
  const owner = {
    session_id: caller.session ?? agentSession(caller.agent),
    list_id: caller.list_id ?? "",
    request_id: key.request_id,
  };
  return deps.store.write(async (tx) => {
    // The same id sent twice at once: the second waits for the first's turn to end, then finds
    // its record and replays it, instead of running the call again on what the first changed.
    tx.lockSession(owner.session_id);
    const prior = await tx.getIdempotent(owner);
    if (prior) {
      if (prior.tool !== key.tool || prior.args_hash !== key.args_hash) {
        throw new ArbeitError(
          "INVALID_ARGUMENT",
          `request_id ${JSON.stringify(key.request_id)} was already used for a different call (${prior.tool}).`,
          {
            suggestions: ["Use a fresh request_id for each distinct call; reuse it only to retry the very same call."],
            details: { request_id: key.request_id, original_tool: prior.tool },
          },
        );
      }
      return JSON.parse(prior.response) as T;
    }
    const response = await run();
    await tx.putIdempotent({
      ...owner,
      tool: key.tool,
      args_hash: key.args_hash,
      response: JSON.stringify(response),
      created_at: deps.now(),
    });
    return response;
  });
}
