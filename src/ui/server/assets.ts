import { readdirSync, readFileSync } from "node:fs";

/**
 * The page: built at build time into dist/ui/assets (the npm package ships it), served from
 * memory. This file sits at src/ui/server or dist/ui/server, so the assets are found the same
 * way from both.
 */
const ASSETS = new URL("../../../dist/ui/assets/", import.meta.url);

export interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** Every built file by name (app.js, app.css, and chunks the page loads later), or undefined when not built. */
export function loadAssets(): Map<string, Asset> | undefined {
  const assets = new Map<string, Asset>();
  try {
    for (const name of readdirSync(ASSETS)) {
      const type = TYPES[name.slice(name.lastIndexOf(".") + 1)];
      if (type) assets.set(name, { body: readFileSync(new URL(name, ASSETS)), type });
    }
  } catch {
    return undefined;
  }
  return assets.has("app.js") && assets.has("app.css") ? assets : undefined;
}

/**
 * The one HTML document every view URL answers; the page reads the URL and draws the view. With
 * `signIn` (`arbeit serve`) the page asks a person for their token when it holds none; otherwise
 * (`arbeit ui`) the token comes in the URL the server printed.
 */
export const shell = (signIn: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${signIn ? '<meta name="arbeit-sign-in" content="person-token">\n' : ""}<title>Arbeit</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Arbeit dashboard needs JavaScript.</noscript>
</body>
</html>
`;

export const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Arbeit</title></head>
<body><p>The dashboard's page is not built in this copy of Arbeit. Run <code>npm run build</code> and start the server again.</p></body>
</html>
`;
