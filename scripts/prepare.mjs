// Runs on `npm install` in a checkout: builds dist/ so that `npx arbeit` works straight away.
// Skipped where the compiler is absent (an install of the packed package, which ships dist/), and
// where the checkout is installed as a folder into another project (`npm install /path/to/arbeit`
// runs this there on every install of that project) once dist/ is built: a project's install
// does not rebuild the checkout; `npm run build` in the checkout does.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(new URL("..", import.meta.url).pathname);
const tsc = join(root, "node_modules", ".bin", "tsc");
// npm sets INIT_CWD to the folder `npm install` was run in.
const fromElsewhere = process.env.INIT_CWD !== undefined && resolve(process.env.INIT_CWD) !== root;
if (fromElsewhere && existsSync(join(root, "dist", "cli", "arbeit.cjs"))) {
  process.stdout.write(
    `arbeit: using the build in ${join(root, "dist")} (run \`npm run build\` there to rebuild it)\n`,
  );
  process.exit(0);
}
if (existsSync(tsc) && existsSync(join(root, "tsconfig.build.json"))) {
  const result = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" });
  process.exit(result.status ?? 1);
}
