import type { z } from "zod";
import { lazyProperty } from "../schemas/lazy.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import type { Result } from "../service/operation.js";

/** What a tool handler may use: who is calling, and the project's service, opened on demand. */
export interface ToolContext {
  caller: Caller;
  cwd: string;
  /** A database file chosen explicitly (--db / ARBEIT_DB). */
  db?: string | undefined;
  service(): Promise<ArbeitService>;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
}

/** One tool, declared once; every front end is generated from these. */
export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for a model choosing between tools: what it is for, in a sentence or two. */
  description: string;
  input: S;
  annotations: ToolAnnotations;
  run(ctx: ToolContext, args: z.infer<S>): Promise<Result<unknown>>;
}

/** A tool as written: its schema is built on first use (see lazyProperty). */
export type ToolSource<S extends z.ZodObject> = Omit<ToolDef<S>, "input"> & { input: () => S };

export function defineTool<S extends z.ZodObject>(source: ToolSource<S>): ToolDef<S> {
  return lazyProperty(source, "input", source.input) as unknown as ToolDef<S>;
}

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
export const IDEMPOTENT_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true };
/**
 * Destructive: one call can remove data (a delete, remove or gc action, or a batch that can run
 * one), so a client may ask a person first. Merely changing a field is not destructive.
 */
export const destructive = (annotations: ToolAnnotations): ToolAnnotations => ({
  ...annotations,
  destructiveHint: true,
});
