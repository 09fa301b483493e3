import { MAX_NAME_LENGTH } from "../domain/identity.js";

/** Documented maxima for every input (docs/limits.md); over them is FIELD_TOO_LARGE. */
export const LIMITS = {
  title: 500,
  text: 32_768,
  context_content: 32_768,
  progress_item: 2_000,
  progress_items: 100,
  metadata_bytes: 16_384,
  id_list: 100,
  name: 200,
  /** Agent, session and list names. */
  identity_name: MAX_NAME_LENGTH,
  file_path: 4_096,
  /** Paths or globs in one reservation call. */
  reserve_paths: 50,
  query_limit: 1_000,
  /** Nesting depth of metadata and memory values (objects and arrays). */
  json_depth: 32,
  /** Nesting depth of a call's arguments as a whole, checked before anything reads them. */
  input_depth: 64,
  memory_value_bytes: 16_384,
  /** Memory time-to-live: ten years. */
  ttl_seconds: 315_360_000,
  /** Live memory entries in one scope (the project, one list, task or agent); a new key beyond it evicts the weakest. */
  memory_entries: 200,
  /** Entries one memory merge folds into one. */
  memory_merge: 50,
  /** Operations in one arbeit_batch call. */
  batch_operations: 100,
} as const;
