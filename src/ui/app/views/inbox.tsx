import type { Me } from "../../contract.js";

export function InboxPage(_: { me: Me | undefined }) {
  return <section data-view="inbox" class="view" />;
}
