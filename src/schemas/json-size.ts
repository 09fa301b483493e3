/** UTF-8 size of a value's JSON. Kept apart from the zod schemas: the service uses it without them. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? "").length;
}
