import { ArbeitError } from "../domain/errors.js";
import { pathDeeperThan } from "./json-size.js";
import { LIMITS } from "./limits.js";

/**
 * A call's arguments nested deeper than LIMITS.input_depth, as FIELD_TOO_LARGE naming the field
 * (as a metadata or memory value too deep for its own limit is); undefined when they are not.
 * Every front end runs it before the schema, the batch or idempotency hashing walk the arguments:
 * each of those recurses, and a hostile nesting of thousands of levels would exhaust the stack
 * (INTERNAL_ERROR) instead of being refused.
 */
export function inputDepthError(args: unknown): ArbeitError | undefined {
  const path = pathDeeperThan(args, LIMITS.input_depth);
  if (path === undefined) return undefined;
  const field = path[0] ?? "input";
  const message = `is nested too deeply (a call's arguments nest at most ${LIMITS.input_depth} levels; metadata and memory values ${LIMITS.json_depth})`;
  return new ArbeitError("FIELD_TOO_LARGE", `Invalid arguments — ${field}: ${message}.`, {
    details: { issues: [{ path: field, message }], depth_path: path.join(".") },
  });
}
