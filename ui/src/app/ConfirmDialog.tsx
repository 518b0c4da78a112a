import { useT } from "./useT";
import { OnBody } from "../components/OnBody";

/** Asks before something that cannot be undone; Cancel has the focus. */
export function ConfirmDialog({
  message,
  confirm,
  cancel,
  onConfirm,
  onCancel,
}: {
  message: string;
  confirm: string;
  /** The label of the button that keeps things as they are; Cancel by default. */
  cancel?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const t = useT();
  return (
    <OnBody>
      <div className="dialog-backdrop">
        <div role="alertdialog" aria-modal="true" className="dialog" aria-label={message}>
          <p>{message}</p>
          <div className="dialog-actions">
            <button type="button" autoFocus onClick={onCancel}>
              {cancel ?? t("presets.cancel")}
            </button>
            <button type="button" className="danger" onClick={onConfirm}>
              {confirm}
            </button>
          </div>
        </div>
      </div>
    </OnBody>
  );
}
