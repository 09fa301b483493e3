// The dashboard's page (`arbeit ui`): src/ui/app, a Preact app, bundled by esbuild into
// dist/ui/assets/app.js and app.css, which the server hands to the browser. Minified, no source
// maps; everything the page needs is in this folder (the server's CSP allows nothing else).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

/** Builds the page into `<root>/dist/ui/assets`; returns the files' sizes in bytes. */
export async function buildUi(root) {
  const outdir = join(root, "dist", "ui", "assets");
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: join(root, "src", "ui", "app", "main.tsx") },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["chrome111", "firefox111", "safari16.4"],
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: join(root, "src", "ui", "app", "tsconfig.json"),
    minify: true,
    sourcemap: false,
    legalComments: "eof",
    charset: "utf8",
    outdir,
    // The graph view's layout library comes as a chunk of its own, loaded when a graph is drawn.
    splitting: true,
    chunkNames: "chunk-[hash]",
    metafile: true,
    logLevel: "warning",
  });
  const sizes = {};
  for (const [file, info] of Object.entries(result.metafile.outputs)) sizes[file] = info.bytes;
  return sizes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = await buildUi(new URL("..", import.meta.url).pathname);
  for (const [file, bytes] of Object.entries(sizes)) process.stdout.write(`${file}: ${bytes} bytes\n`);
}
