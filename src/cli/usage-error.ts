/** A mistake in how the CLI itself was invoked (exit 2), as opposed to a tool error (exit 1). */
export class UsageError extends Error {
  /** The command whose `--help` the message points to, e.g. "task create"; the top level when unset. */
  command: string | undefined;

  constructor(
    message: string,
    readonly hint?: string,
    command?: string,
  ) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}

/** Stamps the command onto a usage error raised below it, so the message names the right help. */
export function inCommand<T>(command: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof UsageError && error.command === undefined) error.command = command;
    throw error;
  }
}
