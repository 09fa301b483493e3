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
  // Copied by descriptor, not by spread: a spread reads every getter, so wrapping an object that
  // is itself lazy (a tool given a request_id) would build the value it means to put off.
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(target);
  delete descriptors[key];
  const copy = Object.defineProperties({}, descriptors);
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
