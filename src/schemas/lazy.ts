/**
 * Replaces `key` on a copy of `target` with a getter that builds the value once, on first read.
 * Building every tool's and query's zod schema when the catalogue loads cost the CLI ~11 ms of
 * its start-up; a call needs one or two of them.
 */
export function lazyProperty<T extends object, K extends string, V>(
  target: T,
  key: K,
  build: () => V,
): Omit<T, K> & Record<K, V> {
  let value: V | undefined;
  let built = false;
  const copy = { ...target } as Record<string, unknown>;
  delete copy[key];
  return Object.defineProperty(copy, key, {
    enumerable: true,
    get: () => {
      if (!built) {
        value = build();
        built = true;
      }
      return value;
    },
  }) as Omit<T, K> & Record<K, V>;
}
