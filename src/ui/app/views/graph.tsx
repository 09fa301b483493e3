import type { Route } from "../router.js";

export function GraphPage(_: { route: Route }) {
  return <section data-view="graph" class="view" />;
}
