import { ArbeitService } from "../src/service/arbeit-service.js";
import { expectEnvelope, openHarness } from "./harness.js";
import { latencyRow } from "./latency.js";
import type { ResultRow } from "./results.js";
import { Rng } from "./stats.js";

/**
 * File reservations at scale: with `live` reservations held by other sessions (files and globs
 * spread over many folders) on the dataset's store, how long one more reservation takes
 * (arbeit_task_claim {paths}, through the catalogue) and how long a host's check before an edit
 * takes (service.checkEdit, what a PreToolUse hook calls on Postgres or through a service; on a
 * local SQLite file the hook reads the same lookup without the service), denied and allowed
 * alike. On the engine the bench runs with (--engine sqlite | postgres), named in each row's note.
 */
export const RESERVE_TARGET_MS = 0.5;
const FOLDERS = 500;
const DAY = 86_400;

export async function measureReservations(
  location: string,
  projectDir: string,
  options: { live: number; iterations: number },
): Promise<ResultRow[]> {
  const h = await openHarness(location, projectDir);
  const service = new ArbeitService(h.store, { projectRoot: projectDir });
  try {
    // Seeded in calls of 50 paths, each session holding one folder's files and a glob or two.
    const perFolder = Math.ceil(options.live / FOLDERS);
    let made = 0;
    for (let folder = 0; made < options.live; folder++) {
      const paths: string[] = [];
      for (let i = 0; i < perFolder && made < options.live; i++, made++)
        paths.push(i === 0 ? `pkg-${folder}/docs/**` : `pkg-${folder}/src/file-${i}.ts`);
      for (let at = 0; at < paths.length; at += 50) {
        const envelope = await h.call(
          "arbeit_task_claim",
          { paths: paths.slice(at, at + 50), lease_seconds: DAY },
          { session: `bench-holder-${folder}`, agent: "holder" },
        );
        expectEnvelope(envelope, `seed reservations ${folder}`);
      }
    }
    const rng = new Rng(23);
    const pick = (n: number) => Math.floor(rng.next() * n);
    const reserveMs: number[] = [];
    const checkMs: number[] = [];
    const caller = { session: "bench-editor", agent: "editor" };
    for (let i = 0; i < options.iterations + 20; i++) {
      const start = process.hrtime.bigint();
      const reserved = await h.call(
        "arbeit_task_claim",
        { paths: [`fresh-${i}/src/new.ts`], lease_seconds: DAY },
        { session: `bench-reserver-${i}`, agent: "reserver" },
      );
      const reserveTook = Number(process.hrtime.bigint() - start) / 1e6;
      expectEnvelope(reserved, `reserve #${i}`);
      // Half the checks hit a held file (denied), half a free one in a held folder (allowed).
      const folder = pick(FOLDERS);
      const path =
        i % 2 === 0 ? `pkg-${folder}/src/file-${1 + pick(perFolder - 1)}.ts` : `pkg-${folder}/src/free-${i}.ts`;
      const checkStart = process.hrtime.bigint();
      const check = await service.checkEdit({ paths: [path] }, caller);
      const checkTook = Number(process.hrtime.bigint() - checkStart) / 1e6;
      if (check.data.decision !== (i % 2 === 0 ? "deny" : "allow"))
        throw new Error(`check-edit #${i} of ${path}: ${check.data.decision}`);
      if (i >= 20) {
        reserveMs.push(reserveTook);
        checkMs.push(checkTook);
      }
    }
    // A Postgres location is `<url>|<schema>` (bench/harness.ts).
    const engine = location.includes("://") ? "Postgres" : "SQLite";
    const live = `${engine}, ${options.live.toLocaleString("en-US")} live reservations`;
    return [
      row("reserve_file", "reserve one file (arbeit_task_claim paths)", reserveMs, `${live}; through the catalogue`),
      row("check_edit", "check before an edit (service.checkEdit)", checkMs, `${live}; half denied, half allowed`),
    ];
  } finally {
    await h.close();
  }
}

function row(name: string, label: string, samples: number[], note: string): ResultRow {
  return { ...latencyRow(name, label, samples, RESERVE_TARGET_MS), note };
}
