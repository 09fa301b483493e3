import { closeSync, constants, createReadStream, existsSync, openSync, readSync, statSync } from "node:fs";
import { Socket } from "node:net";
import { resolve } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { importStore } from "../maintenance/import.js";
import { openProjectStore } from "../maintenance/open-store.js";
import { failure } from "../tools/envelope.js";
import { boundedLines } from "./bounded-lines.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson } from "./output.js";
import { progressBar } from "./progress-bar.js";

const USAGE = `Usage: arbeit import <file | -> [--keep-claims] [--replace] [--with-credentials]

Loads a file written by \`arbeit export\` into this project's database, reproducing every id,
sequence number and timestamp: run \`arbeit init\` in a new folder, then \`arbeit import dump.jsonl\`.

By default the import is a copy for sharing: the claims and active work of the sessions that
exported it are dropped (their owners stay as assignments, the history stays), so every task they
held is free here, and its file reservations are dropped. --keep-claims keeps them as exported, to
restore a store rather than share it.

Nor does a copy for sharing bring credentials or delivery targets: the tokens and webhooks a file
holds are left out, and this store's own stay as they are (--replace too). --with-credentials
loads the file's instead, replacing this store's with --replace: for restoring a store from an
export made with \`arbeit export --with-credentials\`.

The database must be empty; --replace deletes everything in it first. Every row is checked with
the rules the tools apply; a file that breaks one is INVALID_IMPORT naming the line to fix. All or
nothing: a bad or truncated file changes nothing. Exports from an older schema are migrated on the
way in, in a private scratch database beside the store.
`;

/** An export line is one row: fields are limited to tens of KiB, so no real line comes near this. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * A named pipe is opened without blocking and read as a pipe, as standard input is: opening it
 * the ordinary way would wait forever for a writer. Nobody writing to it yet reads as empty.
 */
async function* openInput(path: string): AsyncGenerator<Buffer> {
  if (!statSync(path).isFIFO()) return yield* createReadStream(path);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  // A pipe that never had a writer wakes no event loop: ask once, directly, whether one is there.
  const first = Buffer.alloc(64 * 1024);
  let bytes = -1;
  try {
    bytes = readSync(fd, first, 0, first.length, null);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EAGAIN") {
      closeSync(fd);
      throw error;
    }
  }
  if (bytes === 0) return closeSync(fd);
  if (bytes > 0) yield first.subarray(0, bytes);
  yield* new Socket({ fd, readable: true, writable: false });
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { flags, positionals } = maintenanceArgs(
    argv,
    { flags: ["replace", "keep-claims", "with-credentials"], positionals: { min: 1, max: 1 } },
    USAGE,
  );
  const source = positionals[0]!;
  let store: Awaited<ReturnType<typeof openProjectStore>> | undefined;
  const bar = progressBar("import");
  try {
    store = await openProjectStore({ cwd: process.cwd(), db: options.db ?? process.env.ARBEIT_DB });
    if (source !== "-" && !existsSync(resolve(source))) {
      throw new ArbeitError("INVALID_ARGUMENT", `There is no file ${resolve(source)} to import.`, {
        suggestions: ["Pass the path of a file written by `arbeit export`, or - to read standard input."],
      });
    }
    const input = source === "-" ? process.stdin : openInput(resolve(source));
    const lines = boundedLines(input, MAX_LINE_BYTES, source === "-" ? "Standard input" : resolve(source));
    const summary = await importStore(store, lines, {
      replace: flags.has("replace"),
      keepClaims: flags.has("keep-claims"),
      credentials: flags.has("with-credentials"),
      onProgress: bar.update,
    });
    bar.finish();
    return printEnvelope({ success: true, data: summary }, wantsJson(options.json));
  } catch (error) {
    bar.finish();
    return printEnvelope(failure(error), wantsJson(options.json));
  } finally {
    await store?.close();
  }
}
