/**
 * The task page's Follow button: a followed task's completion becomes a browser notification while
 * the dashboard is open. What is followed is kept in this browser (see ../notify.tsx).
 */
import { askPermission, setFollowed, useFollowed } from "../notify.js";

export function FollowButton({ taskId }: { taskId: string }) {
  const following = useFollowed(taskId);
  const toggle = () => {
    setFollowed(taskId, !following);
    // Following is asking to be told: the browser's permission is asked for along with it.
    if (!following) void askPermission();
  };
  return (
    <button
      type="button"
      class="quiet"
      aria-pressed={following}
      title={
        following
          ? "You are told (a browser notification) when this task is completed. Click to stop."
          : "Be told (a browser notification) when this task is completed"
      }
      onClick={toggle}
    >
      {following ? "Following" : "Follow"}
    </button>
  );
}
