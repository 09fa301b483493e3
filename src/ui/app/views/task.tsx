import type { Me } from "../../contract.js";

export function TaskPage(_: { taskId: string; me: Me | undefined }) {
  return <section data-view="task" class="view" />;
}
