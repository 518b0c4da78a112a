// Tauri listeners for effects: subscribed once, removed when the effect ends, even when that is
// before the subscription came back.
type Unlisten = () => void;

/** Subscribes with `subscribe` and returns the effect's cleanup. */
export function listenInEffect(subscribe: () => Promise<Unlisten>): Unlisten {
  let stop: Unlisten | undefined;
  let cancelled = false;
  try {
    subscribe()
      .then((unlisten) => (cancelled ? unlisten() : (stop = unlisten)))
      .catch(() => {});
  } catch {
    // Outside the app window (component tests) there is nothing to listen to.
  }
  return () => {
    cancelled = true;
    stop?.();
  };
}
