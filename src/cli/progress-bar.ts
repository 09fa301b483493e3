/**
 * A one-line progress bar on stderr for long maintenance runs (export, import). Drawn only when
 * stderr is a terminal, so pipes, logs and tests see nothing; redrawn at most ten times a second.
 */
export interface ProgressBar {
  update(done: number, total: number): void;
  finish(): void;
}

const WIDTH = 30;
const INTERVAL_MS = 100;

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  if (!stream.isTTY) return { update: () => {}, finish: () => {} };
  let last = 0;
  let drawn = false;
  const draw = (done: number, total: number) => {
    const fraction = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(fraction * WIDTH);
    const bar = `${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}`;
    stream.write(`\r${label} [${bar}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${done}/${total}`);
    drawn = true;
  };
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < INTERVAL_MS && done < total) return;
      last = now;
      draw(done, total);
    },
    finish() {
      if (drawn) stream.write("\r\x1b[2K");
    },
  };
}
