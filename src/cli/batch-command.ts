import { ArbeitError } from "../domain/errors.js";
import { findTool } from "../tools/catalogue.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { readFileBoundedSync, readStdinSync } from "./stdin.js";
import { callTool } from "./tool-call.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit batch <file | ->

Runs the arbeit_batch tool on a JSON file (or standard input with -): up to 100 write operations
in one transaction, all or nothing. The file holds {"operations": [...], "request_id": "..."} or
just the list of operations. Each operation is {"tool": "<arbeit_* write>", "args": {...},
"ref": "<name>"}; a later operation uses an earlier one's new id as "$<name>" in a field that
holds ids (task_id, parent_id, blocked_by, ...); every other string is taken as written:

  [
    {"tool": "arbeit_task_create", "args": {"title": "Rate limiting", "type": "epic"}, "ref": "epic"},
    {"tool": "arbeit_task_create", "args": {"title": "Token bucket", "parent_id": "$epic"}}
  ]

When one operation fails nothing is written, and the error names the operation's index.
Without a request_id in the file, ARBEIT_REQUEST_ID (if set) is the batch's.
Exit 0 on success, 1 on a tool error, 2 on a usage error.
`;

function readBatch(source: string): unknown {
  const what = source === "-" ? "Standard input" : `The batch file ${source}`;
  const text = source === "-" ? readStdinSync() : readFileBoundedSync(source, what);
  if (text.trim() === "") {
    throw new ArbeitError("INVALID_ARGUMENT", `${what} is empty: there is no batch to run.`, {
      suggestions: [
        "Write the operations to a file and pass its path, or pipe them to `arbeit batch -` (a named pipe nobody writes to reads as empty).",
      ],
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ArbeitError("INVALID_ARGUMENT", `The batch is not valid JSON (${(error as Error).message}).`);
  }
  return Array.isArray(value) ? { operations: value } : value;
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const { positionals } = maintenanceArgs(argv, { flags: [], positionals: { min: 1, max: 1 } }, USAGE);
  try {
    const envelope = await callTool(findTool("arbeit_batch")!, readBatch(positionals[0]!), options);
    return printEnvelope(envelope, wantsJson(options.json));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return printEnvelope(failure(error), wantsJson(options.json));
  }
}
