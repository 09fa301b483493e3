// Runs test files as separate processes, several at once. Most of a test file's time is spent
// waiting (on the CLI processes it spawns, Postgres, a browser, a host binary), so on two cores
// four to six files side by side finish far sooner than one after the other.
import { spawn } from "node:child_process";

/**
 * Runs one command in a process group of its own, with its output (stdout and stderr in the order
 * they came) kept, not printed: the caller prints it whole when the file ends, so the reports of
 * files running side by side never interleave. Measures wall time and the processor time of the
 * whole tree it waited for (bash's `times` after the command: the command and every process it
 * spawned and reaped). Past `timeoutMs` the group is killed and the result says so.
 */
export function runJob({ command, args, cwd, env, timeoutMs }) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn("bash", ["-c", '"$@"; code=$?; times >&3; exit $code', "bash", command, ...args], {
      cwd,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    running.add(child);
    let output = "";
    let times = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.stdio[3].on("data", (chunk) => (times += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      kill(child);
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({
        code: code ?? 1,
        signal,
        output,
        timedOut,
        wallMs: Math.round(performance.now() - started),
        cpuMs: childrenCpu(times),
      });
    });
  });
}

/** The second line of bash's `times` is its children's user and system time: "0m1.250s 0m0.310s". */
function childrenCpu(times) {
  const line = times.trim().split("\n")[1];
  if (!line) return undefined;
  const seconds = line
    .trim()
    .split(/\s+/)
    .map((part) => {
      const match = /^(\d+)m([\d.]+)s$/.exec(part);
      return match ? Number(match[1]) * 60 + Number(match[2]) : Number.NaN;
    });
  const total = seconds.reduce((sum, value) => sum + value, 0);
  return Number.isFinite(total) ? Math.round(total * 1000) : undefined;
}

const running = new Set();

function kill(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Stops every file still running (the runner itself was interrupted). */
export function killAll() {
  for (const child of running) kill(child);
}

/**
 * Runs `jobs` (each `() => Promise`) with at most `concurrency` at a time, in the order given, and
 * calls `done` as each ends. Resolves with the results in the jobs' order.
 */
export async function pool(jobs, concurrency, done) {
  const results = new Array(jobs.length);
  let next = 0;
  async function worker() {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]();
      done(results[index], index);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, jobs.length)) }, worker));
  return results;
}
