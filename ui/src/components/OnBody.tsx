import type { ReactNode } from "react";
import { createPortal } from "react-dom";

/**
 * Puts `children` on the page's body while they stay in the React tree where they are rendered
 * (its context, its events). For what is drawn `position: fixed` over the window from inside a
 * pane: a pane contains its layout (styles.css, `.panes > *`), which makes it the box that
 * fixed descendants are placed in and clipped to.
 */
export function OnBody({ children }: { children: ReactNode }) {
  return createPortal(children, document.body);
}
