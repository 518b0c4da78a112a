import { act, render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { MessageList, ROW_HEIGHT, WINDOW_FROM } from "./MessageList";

function list(count: number) {
  return render(
    <section className="preview">
      <MessageList
        count={count}
        open={null}
        renderRow={(i, style) => (
          <li key={i} style={style} data-row={i}>
            row {i}
          </li>
        )}
      />
    </section>,
  );
}

const rows = (c: HTMLElement) => [...c.querySelectorAll("li")].map((li) => Number(li.dataset.row));

describe("the preview's message list", () => {
  it("keeps every row of a short context in the page", () => {
    const { container } = list(WINDOW_FROM);
    expect(rows(container)).toHaveLength(WINDOW_FROM);
  });

  it("renders only the rows near the view of a long one, and follows the scroll", () => {
    const { container } = list(1000);
    const scroller = container.querySelector(".preview") as HTMLElement;
    const ol = container.querySelector("ol") as HTMLElement;
    expect(ol.style.height).toBe(`${1000 * ROW_HEIGHT}px`);
    const first = rows(container);
    expect(first[0]).toBe(0);
    expect(first.length).toBeLessThan(100);

    Object.defineProperty(scroller, "clientHeight", { value: 640, configurable: true });
    act(() => {
      scroller.scrollTop = 500 * ROW_HEIGHT;
      scroller.dispatchEvent(new Event("scroll"));
    });
    const shown = rows(container);
    expect(shown).toContain(500);
    expect(shown).toContain(509);
    expect(shown).not.toContain(0);
    expect(shown).not.toContain(999);
    const row500 = container.querySelector('[data-row="500"]') as HTMLElement;
    expect(row500.style.top).toBe(`${500 * ROW_HEIGHT}px`);
  });
});
