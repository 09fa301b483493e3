/** A mistake in how the CLI itself was invoked (exit 2), as opposed to a tool error (exit 1). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}
