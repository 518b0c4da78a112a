import { useEffect, useRef, useState } from "react";
import type { ShownRequest } from "../../bindings";
import { previewRequest, useApp } from "../../app/store";
import { api, errorMessage } from "../../app/api";
import { useT } from "../../app/useT";
import { useSend } from "../send/sending";

/**
 * The Request view: the provider's request, built when the view opens (a long session's is
 * large) and again after each build while it is shown. Through the chosen connection it is what
 * Send sends: the URL, the headers with the key redacted, and the body byte for byte.
 */
export function ProviderRequest() {
  const t = useT();
  const [shown, setShown] = useState<{ request: ShownRequest | null; body: string } | null>(null);
  const preview = useApp((s) => s.preview);
  const connection = useSend((s) => s.connection);
  // One request at a time: builds that come while one is being made leave only the newest to
  // make next (the preview rebuilds on every keystroke; each of these is a whole build too).
  const busy = useRef(false);
  const next = useRef<(() => void) | null>(null);
  useEffect(() => {
    let current = true;
    const ask = () => {
      const request = previewRequest();
      if (!request) return;
      busy.current = true;
      const answer = connection
        ? api.connectionRequest(request, connection).then((r) => ({ request: r, body: r.body }))
        : api.providerRequest(request).then((body) => ({ request: null, body }));
      void answer
        .then(
          (s) => current && setShown(s),
          (err) => current && setShown({ request: null, body: errorMessage(err) }),
        )
        .finally(() => {
          busy.current = false;
          const then = next.current;
          next.current = null;
          then?.();
        });
    };
    if (busy.current) next.current = ask;
    else ask();
    return () => {
      current = false;
    };
  }, [preview, connection]);
  return (
    <section className="request" data-testid="request-view" aria-label={t("preview.request")}>
      <h3>
        {t("preview.request")}
        {connection && <span className="muted"> · {connection}</span>}
      </h3>
      {shown?.request && (
        <div className="request-head" data-testid="provider-request-head">
          <code data-testid="provider-request-url">POST {shown.request.url}</code>
          <ul className="request-headers">
            {shown.request.headers.map(([name, value], i) => (
              <li key={i}>
                <code>
                  {name}: {value}
                </code>
              </li>
            ))}
          </ul>
        </div>
      )}
      <pre data-testid="provider-request">{shown?.body ?? t("preview.building")}</pre>
    </section>
  );
}

