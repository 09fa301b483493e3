import { z } from "zod";
import { type IdKind, idPattern } from "../domain/ids.js";
import { LIMITS } from "./limits.js";

/** zod building blocks shared by the tool catalogue and the query registry. */

const noNul = (value: string) => !value.includes("\0");
const NUL_MESSAGE = "must not contain NUL bytes";

export function text(max: number) {
  return z.string().max(max).refine(noNul, NUL_MESSAGE);
}

export function id(kind: IdKind) {
  return z
    .string()
    .regex(idPattern(kind), `must look like ${kind === "task" ? "tkt-a7f3b2c1" : `${idPattern(kind).source}`}`);
}

export const taskId = id("task");

export const metadata = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= LIMITS.metadata_bytes, {
    message: `must serialise to at most ${LIMITS.metadata_bytes} bytes of JSON`,
    params: { tooLarge: true },
  });

export const name = text(LIMITS.name);
export const listId = z
  .string()
  .min(1)
  .max(LIMITS.list_id)
  .regex(/^[A-Za-z0-9._:/-]+$/, "may hold letters, digits and . _ : / - only");

export const limit = z.number().int().min(1).max(LIMITS.query_limit);
export const offset = z.number().int().min(0);

/** Optimistic concurrency: the version the caller last read (DESIGN §5). */
export const expectedVersion = z.number().int().min(1);

/** Idempotency key: a repeat by the same agent replays the first response (DESIGN §5). */
export const requestId = z.string().min(1).max(LIMITS.name).refine(noNul, NUL_MESSAGE);
