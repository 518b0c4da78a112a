import { useRef, type ReactNode } from "react";

/**
 * A switch of the preview's header for a view shown in place of the message list: `value` is
 * what the view shows (null: off); switched back on, it shows what it showed last, else `first()`.
 */
export function ViewToggle<T>({
  value,
  set,
  first,
  testId,
  className,
  label,
  hint,
  children,
}: {
  value: T | null;
  set: (value: T | null) => void;
  first: () => T;
  testId: string;
  className: string;
  /** The name of a button that shows an icon. */
  label?: string;
  hint: string;
  children: ReactNode;
}) {
  const last = useRef<T | null>(null);
  const on = value !== null;
  return (
    <button
      type="button"
      className={on ? `${className} on` : className}
      data-testid={testId}
      aria-pressed={on}
      aria-label={label}
      title={hint}
      onClick={() => {
        if (on) {
          last.current = value;
          set(null);
        } else {
          set(last.current ?? first());
        }
      }}
    >
      {children}
    </button>
  );
}
