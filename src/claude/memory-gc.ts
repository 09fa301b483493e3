import type { ArbeitService } from "../service/arbeit-service.js";

/**
 * Where the SessionEnd and PreCompact hooks let the store forget what has run its course. A
 * no-op for now: memory collection lands with the memory change, which fills this in.
 */
export async function collectMemory(_service: ArbeitService): Promise<void> {}
