import { z } from "zod";
import { MAX_LEASE_SECONDS } from "../domain/claims.js";
import { TEMPLATE_NAMES, templateGuide } from "../domain/templates.js";
import {
  CONTEXT_TYPES,
  INVERSE_RELATIONSHIP_TYPES,
  MEMORY_SCOPES,
  RELATIONSHIP_TYPES,
  RISK_LEVELS,
  TASK_STATUSES,
  TASK_TYPES,
} from "../domain/types.js";
import {
  expectedVersion,
  id,
  identityName,
  jsonValue,
  listId,
  metadata,
  name,
  taskId,
  taskMetadata,
  text,
} from "./common.js";
import { LIMITS } from "./limits.js";

/**
 * The input schemas of the tools whose arguments the service takes as they are. The tool
 * catalogue validates with them, and the service's input types are inferred from them, so a
 * field exists in one place only. Each is built on first use (the catalogue calls the factory).
 */

const longText = () => text(LIMITS.text);
const blockedBy = () => z.array(taskId).max(LIMITS.id_list);
const level = () => z.enum(RISK_LEVELS);
// One enum with null in it reads cheaper in a tool's schema than "a level, or null".
const clearableLevel = () => z.literal([...RISK_LEVELS, null]);
export const priority = () => z.number().int().min(0).max(4);

export const taskCreateInput = () =>
  z.strictObject({
    title: text(LIMITS.title).min(1),
    type: z.enum(TASK_TYPES).nullable().optional(),
    template: z.enum(TEMPLATE_NAMES).optional().describe(`Sets type, returns a plan stub. ${templateGuide()}`),
    intent: longText().optional().describe("Why; immutable once set"),
    description: longText().optional(),
    plan: longText().optional(),
    parent_id: taskId.optional(),
    blocked_by: blockedBy().optional(),
    status: z.enum(TASK_STATUSES).optional(),
    priority: priority().optional().describe("0 highest, 4 lowest; default 2"),
    risk: level().optional(),
    impact: level().optional(),
    owner: identityName.optional(),
    active_form: name.optional().describe("Present-tense label, e.g. 'Fixing login'"),
    list_id: listId.optional(),
    metadata: taskMetadata.optional(),
  });

export const taskUpdateInput = () =>
  z.strictObject({
    task_id: taskId,
    title: text(LIMITS.title).min(1).optional(),
    type: z.enum(TASK_TYPES).nullable().optional(),
    intent: longText().optional(),
    description: longText().optional(),
    plan: longText().optional(),
    status: z.enum(TASK_STATUSES).optional(),
    parent_id: taskId.nullable().optional(),
    blocked_by: blockedBy().optional(),
    priority: priority().optional(),
    risk: clearableLevel().optional(),
    impact: clearableLevel().optional(),
    owner: identityName.nullable().optional(),
    active_form: name.nullable().optional(),
    metadata: taskMetadata.optional(),
    expected_version: expectedVersion.optional(),
    force: z.boolean().optional().describe("Break another session's claim (logged)"),
    landed_ref: text(LIMITS.title)
      .min(1)
      .optional()
      .describe(
        "With status completed: the commit or pull request the work landed in (CI may then finish a held task)",
      ),
  });

export const contextAddInput = () =>
  z.strictObject({
    task_id: taskId,
    type: z.enum(CONTEXT_TYPES),
    content: text(LIMITS.context_content).min(1),
    metadata: metadata.optional(),
    supersede_entry_id: id("context").optional(),
  });

export const relationshipInput = () =>
  z.strictObject({
    action: z.enum(["add", "remove"]),
    from_task_id: taskId,
    to_task_id: taskId,
    type: z.enum([...RELATIONSHIP_TYPES, ...INVERSE_RELATIONSHIP_TYPES]),
    metadata: metadata.optional(),
  });

export const claimInput = () =>
  z.strictObject({
    action: z.enum(["claim", "renew", "release"]).optional(),
    task_id: taskId.optional(),
    next: z.boolean().optional(),
    lease_seconds: z.number().int().min(1).max(MAX_LEASE_SECONDS).optional().describe("Default 900"),
    force: z.boolean().optional().describe("release: a person breaks another session's (logged)"),
    list_id: listId.optional(),
    expected_version: expectedVersion.optional(),
    paths: z.array(text(LIMITS.file_path)).max(LIMITS.reserve_paths).optional(),
    shared: z.boolean().optional(),
  });

export const resumeInput = () =>
  z.strictObject({
    list_id: listId.optional(),
    peek: z.boolean().optional(),
    // The least a packet can always be cut to (its frame, the focus task in brief and what was
    // cut) is about 400 tokens; a smaller budget could not be kept.
    max_tokens: z.number().int().min(400).max(50_000).optional().describe("Default 1500"),
    session: identityName.optional(),
  });

export const memoryInput = () =>
  z.strictObject({
    action: z.enum(["set", "get", "list", "delete", "gc", "similar", "merge"]),
    scope: z.enum(MEMORY_SCOPES).optional(),
    scope_id: name.min(1).optional().describe("Task/list id or agent; default yours"),
    key: text(LIMITS.name).min(1).optional(),
    keys: z.array(text(LIMITS.name)).max(LIMITS.memory_merge).optional(),
    value: jsonValue(z.unknown(), LIMITS.memory_value_bytes).optional(),
    ttl_seconds: z.number().int().min(1).max(LIMITS.ttl_seconds).optional(),
    prefix: text(LIMITS.name).optional(),
    limit: z.number().int().min(1).max(LIMITS.query_limit).optional(),
  });

export type CreateTaskInput = z.infer<ReturnType<typeof taskCreateInput>>;
export type UpdateTaskInput = z.infer<ReturnType<typeof taskUpdateInput>>;
export type AddContextInput = z.infer<ReturnType<typeof contextAddInput>>;
export type RelationshipInput = z.infer<ReturnType<typeof relationshipInput>>;
export type ClaimInput = z.infer<ReturnType<typeof claimInput>>;
export type ResumeInput = Omit<z.infer<ReturnType<typeof resumeInput>>, "session">;
export type MemoryInput = z.infer<ReturnType<typeof memoryInput>>;
