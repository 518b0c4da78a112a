import { useCallback, useState } from "react";
import { errorMessage } from "./api";

/** Runs an action and keeps the message of its last failure for the component to show. */
export function useRunner(): [error: string | null, run: (work: Promise<unknown>) => void] {
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    (work: Promise<unknown>) => void work.then(() => setError(null)).catch((e) => setError(errorMessage(e))),
    [],
  );
  return [error, run];
}
