import type { Me } from "../../contract.js";

export function AgentsPage(_: { me: Me | undefined }) {
  return <section data-view="agents" class="view" />;
}
