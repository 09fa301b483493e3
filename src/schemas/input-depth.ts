import { ArbeitError } from "../domain/errors.js";
import { pathDeeperThan } from "./json-size.js";
import { LIMITS } from "./limits.js";

/**
 * A call's arguments nested deeper than LIMITS.input_depth, as INPUT_TOO_LARGE; undefined when
 * they are not. Every front end runs it before the schema, the batch's reference resolution or
 * idempotency hashing walk the arguments, since each of those recurses and a hostile nesting of
 * thousands of levels would exhaust the stack (INTERNAL_ERROR) instead of being refused.
 */
export function inputDepthError(args: unknown): ArbeitError | undefined {
  const path = pathDeeperThan(args, LIMITS.input_depth);
  if (path === undefined) return undefined;
  const field = path[0] ?? "input";
  return new ArbeitError(
    "INPUT_TOO_LARGE",
    `The arguments nest deeper than ${LIMITS.input_depth} levels (in ${field}); nothing was run.`,
    {
      suggestions: [
        `Flatten the value: metadata and memory values nest at most ${LIMITS.json_depth} levels, and no argument needs more.`,
      ],
      details: { path: path.join("."), limit: LIMITS.input_depth },
    },
  );
}
