import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { exportStore } from "../maintenance/export.js";
import { openProjectStore } from "../maintenance/open-store.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { progressBar } from "./progress-bar.js";

const USAGE = `Usage: arbeit export [<file> | -] [--force] [--with-credentials]

Writes every table (tasks, relationships, context, progress, sessions, files, events, claims,
memory ...) as JSON Lines: a header line with the format and schema version, then one line per
row. To <file> with a summary on stdout, or to stdout when no file or "-" is given. The file
appears only when the export is complete (it is written under a temporary name first), and an
existing file is replaced only with --force. Taken from one snapshot while agents keep working.
Format: docs/maintenance.md.

An export is a copy to share: it carries no credentials and no delivery targets (the service's
tokens, the webhooks with their URLs and signing secrets). --with-credentials adds them, to
restore this store elsewhere; such a file is written readable by its owner only (0600).
`;

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { flags, positionals } = maintenanceArgs(
    argv,
    { flags: ["force", "with-credentials"], positionals: { min: 0, max: 1 } },
    USAGE,
  );
  const credentials = flags.has("with-credentials");
  const target = positionals[0] === undefined || positionals[0] === "-" ? undefined : resolve(positionals[0]);
  let store: Awaited<ReturnType<typeof openProjectStore>> | undefined;
  let partial: PartialFile | undefined;
  const bar = progressBar("export");
  try {
    if (target !== undefined && !flags.has("force") && existsSync(target)) throw exists(target);
    store = await openProjectStore({ cwd: process.cwd(), db: options.db ?? process.env.ARBEIT_DB });
    if (target === undefined) {
      // Synchronous writes: the export streams out at the pace of its reader, never piling up in memory.
      await exportStore(store, (chunk) => write(1, chunk), { onProgress: bar.update, credentials });
      return 0;
    }
    partial = new PartialFile(target);
    const file = partial;
    const summary = await exportStore(
      store,
      (chunk) => {
        file.write(chunk);
        // Let the event loop turn between chunks, so that an interrupt is handled mid-export.
        return new Promise<void>((resolve) => setImmediate(resolve));
      },
      { onProgress: bar.update, credentials },
    );
    // A restore's copy holds what lets anyone in, and sign as the project: its owner's alone.
    file.finish(flags.has("force"), credentials ? 0o600 : 0o644 & ~process.umask());
    partial = undefined;
    bar.finish();
    return printEnvelope({ success: true, data: { path: target, ...summary } }, wantsJson(options.json));
  } catch (error) {
    bar.finish();
    partial?.discard();
    return printEnvelope(failure(error), wantsJson(options.json));
  } finally {
    bar.finish();
    await store?.close();
  }
}

function exists(target: string): ArbeitError {
  return new ArbeitError("INVALID_ARGUMENT", `${target} already exists; the export did not replace it.`, {
    suggestions: ["Name a new file; the existing one was left as it is."],
    details: { path: target },
  });
}

/**
 * The export's file while it is written: a temporary name beside the target, moved into place
 * when complete, removed if the export fails or the process is interrupted. A reader never sees
 * half an export under the real name.
 */
class PartialFile {
  readonly path: string;
  readonly #target: string;
  #fd: number | undefined;
  readonly #onSignal = (signal: NodeJS.Signals) => {
    this.discard();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };

  constructor(target: string) {
    this.#target = target;
    this.path = join(
      dirname(target),
      `.${basename(target)}.arbeit-export-${process.pid}-${randomBytes(4).toString("hex")}`,
    );
    // Listening before the file exists: an interrupt never finds it there unguarded.
    process.once("SIGINT", this.#onSignal);
    process.once("SIGTERM", this.#onSignal);
    process.once("SIGHUP", this.#onSignal);
    this.#fd = openSync(this.path, "wx", 0o600);
  }

  write(chunk: string): void {
    write(this.#fd!, chunk);
  }

  /** Flushes to disk, then moves into place with `mode`: replacing an existing file only when `force`. */
  finish(force: boolean, mode: number): void {
    fsyncSync(this.#fd!);
    closeSync(this.#fd!);
    this.#fd = undefined;
    chmodSync(this.path, mode);
    if (force) renameSync(this.path, this.#target);
    else {
      try {
        // Linking fails if the name was taken meanwhile: nothing is overwritten without --force.
        linkSync(this.path, this.#target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") throw exists(this.#target);
        throw error;
      } finally {
        rmSync(this.path, { force: true });
      }
    }
    this.#release();
  }

  discard(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    rmSync(this.path, { force: true });
    this.#release();
  }

  #release(): void {
    process.off("SIGINT", this.#onSignal);
    process.off("SIGTERM", this.#onSignal);
    process.off("SIGHUP", this.#onSignal);
  }
}
