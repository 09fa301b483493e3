import type { Route } from "../router.js";

export function ActivityPage(_: { route: Route }) {
  return <section data-view="activity" class="view" />;
}
