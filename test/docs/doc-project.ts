import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IdMap, TimeMap } from "./normalise.js";

export const CHECKOUT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** The pages whose examples are tests: the README, then docs/*.md by name. */
export const DOC_PAGES = [
  "README.md",
  ...readdirSync(join(CHECKOUT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];

/**
 * The temporary project a page's commands run in, laid out as the pages show it: the project is
 * /home/you/my-app below a private root, and HOME is /home/you below it, so `~` works and stripping
 * the root from real output gives back the path the page shows.
 */
export class DocProject {
  readonly root: string;
  readonly home: string;
  readonly dir: string;
  readonly ids: IdMap;
  readonly times: TimeMap;
  /** A Postgres schema of its own, for pages that name the shared database. */
  readonly schema: string;

  private constructor(root: string, ids: IdMap, times: TimeMap) {
    this.root = root;
    this.home = join(root, "home", "you");
    this.dir = join(this.home, "my-app");
    this.ids = ids;
    this.times = times;
    this.schema = `arbeit_docs_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  }

  /** A new project: a git repository with one commit, and Arbeit installed unless `bare`. */
  static create(bare: boolean): DocProject {
    const project = new DocProject(
      realpathSync(mkdtempSync(join(tmpdir(), "arbeit-docs-"))),
      new IdMap(),
      new TimeMap(),
    );
    mkdirSync(project.dir, { recursive: true });
    writeFileSync(join(project.dir, "README.md"), "# my-app\n");
    project.mustRun("git", ["init", "-q", "-b", "main"]);
    project.mustRun("git", ["add", "README.md"]);
    project.mustRun("git", ["commit", "-q", "-m", "Start"]);
    // What the pages' own install step does (they name this checkout /path/to/arbeit).
    if (!bare) project.mustRun("npm", ["install", "--save-dev", CHECKOUT]);
    return project;
  }

  /** A copy of another page's project as that page left it, ids and all. */
  static continuing(from: DocProject): DocProject {
    const project = new DocProject(
      realpathSync(mkdtempSync(join(tmpdir(), "arbeit-docs-"))),
      from.ids.clone(),
      from.times.clone(),
    );
    // npm's link to the checkout is relative, and both roots sit at the same depth in tmpdir.
    cpSync(from.root, project.root, { recursive: true, verbatimSymlinks: true });
    return project;
  }

  env(): Record<string, string> {
    const path = (process.env.PATH ?? "")
      .split(delimiter)
      // Only what the page installs may provide `arbeit`: no node_modules/.bin of the test's own run.
      .filter((entry) => entry !== "" && !entry.includes("node_modules"));
    return {
      PATH: [dirname(process.execPath), ...path].join(delimiter),
      HOME: this.home,
      SHELL: "/bin/bash",
      LANG: "C.UTF-8",
      TERM: "dumb",
      NO_COLOR: "1",
      GIT_AUTHOR_NAME: "You",
      GIT_AUTHOR_EMAIL: "you@example.com",
      GIT_COMMITTER_NAME: "You",
      GIT_COMMITTER_EMAIL: "you@example.com",
      // npx must run what the page installed, never fetch `arbeit` from the registry; an install
      // of this checkout needs nothing from it either. Its prepare script would rebuild dist/.
      npm_config_offline: "true",
      npm_config_ignore_scripts: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
      npm_config_progress: "false",
      npm_config_color: "false",
    };
  }

  mustRun(command: string, args: string[]): void {
    const result = spawnSync(command, args, { cwd: this.dir, env: this.env(), encoding: "utf8" });
    if (result.status !== 0) {
      throw new Error(`${command} ${args.join(" ")} failed (${result.status}) in ${this.dir}:\n${result.stderr}`);
    }
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
