/**
 * Serialises transactions within one process: a SQLite connection holds one transaction at a
 * time, and async service calls would otherwise interleave their BEGINs.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

const byFile = new Map<string, Mutex>();

/**
 * One mutex per database file per process. Two stores opened on the same file in one process
 * then take turns instead of colliding on SQLite's lock, where the synchronous driver would
 * block the very thread the lock holder needs to finish.
 */
export function mutexForFile(path: string): Mutex {
  let mutex = byFile.get(path);
  if (!mutex) {
    mutex = new Mutex();
    byFile.set(path, mutex);
  }
  return mutex;
}
