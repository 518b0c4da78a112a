import { useEffect, useRef } from "react";
import { getState, setPreviewTab, useApp, type PreviewTab } from "../../app/store";
import { useT } from "../../app/useT";
import { ComparePane } from "./ComparePane";
import { ChangesPane } from "../changes/ChangesPane";
import { GenerationTypeSwitch, SendPanel } from "../send/SendPanel";
import { MacrosView } from "../macros/MacrosView";
import { LorebookTestView } from "../lorebook/LorebookTestView";
import { PreviewBody, PromptView } from "./MessagesView";
import { PreviewHeader } from "./PreviewHeader";
import { ProviderRequest } from "./ProviderRequest";
import { PreviewTabs, panelId, tabId } from "./PreviewTabs";
import "./views.css";

/**
 * The live preview (RULES 9.4): one header row (model, session, connection), then one tab per view,
 * each with the pane's whole height: the messages (with Send and the reply), the prompt string
 * of a text-completion build, the changes, the provider's request, the macros, the lorebook test.
 */
export function PreviewPane() {
  const t = useT();
  const preview = useApp((s) => s.preview);
  const error = useApp((s) => s.previewError);
  const tab = useApp((s) => s.previewTab);
  const hasPrompt = !!preview?.result.prompt;
  usePromptFirst(hasPrompt);
  const tabs: PreviewTab[] = ["messages", ...(hasPrompt ? (["prompt"] as const) : []), "changes", "request", "macros", "lorebook"];
  // The Prompt string view goes with the prompt string.
  const shown: PreviewTab = tab === "prompt" && !hasPrompt ? "messages" : tab;

  return (
    <section className="preview" aria-label={t("preview.title")}>
      <PreviewHeader />
      <PreviewTabs tabs={tabs} shown={shown} />
      {error && (
        <p className="error" role="alert" data-testid="preview-error">
          {t("preview.failed", { message: error })}
        </p>
      )}
      <div role="tabpanel" id={panelId} aria-labelledby={tabId(shown)} className="preview-panel" data-view={shown}>
        <View tab={shown} />
      </div>
    </section>
  );
}

function View({ tab }: { tab: PreviewTab }) {
  const t = useT();
  const preview = useApp((s) => s.preview);
  const error = useApp((s) => s.previewError);
  const comparing = useApp((s) => s.compareModel !== null);
  const building = !error && <p className="muted">{t("preview.building")}</p>;
  switch (tab) {
    case "messages":
      return (
        <>
          <SendPanel />
          <GenerationTypeSwitch />
          {comparing ? <ComparePane /> : preview ? <PreviewBody preview={preview} stale={!!error} /> : building}
        </>
      );
    case "prompt":
      return preview?.result.prompt ? (
        <PromptView prompt={preview.result.prompt} messages={preview.result.messages} tokens={preview.result.tokens.total} />
      ) : (
        <p className="muted">{t("views.noPrompt")}</p>
      );
    case "changes":
      return <ChangesPane />;
    case "request":
      return <ProviderRequest />;
    case "macros":
      return <MacrosView />;
    case "lorebook":
      return <LorebookTestView />;
  }
}

/** When a build starts to have a prompt string (an instruct template was chosen), the Prompt
 * string view shows: in text completion it is what is sent. */
function usePromptFirst(hasPrompt: boolean) {
  const had = useRef(hasPrompt);
  useEffect(() => {
    if (hasPrompt && !had.current && getState().previewTab === "messages") setPreviewTab("prompt");
    had.current = hasPrompt;
  }, [hasPrompt]);
}
