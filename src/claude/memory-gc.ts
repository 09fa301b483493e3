import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";

/**
 * Where the SessionEnd and PreCompact hooks let the store forget what has run its course:
 * expired memory is deleted for good (`arbeit_memory` gc). Housekeeping: a failure (a read-only
 * store, a busy one) is ignored and never costs the hook its output.
 */
export async function collectMemory(service: ArbeitService, caller: Caller): Promise<void> {
  await service.memory({ action: "gc" }, caller).catch(() => undefined);
}
