/** The line icons of the compact buttons (the preview's header): drawn in the text's colour. */
const PATHS = {
  compare: "M4 7h15M15 3l4 4-4 4M20 17H5M9 13l-4 4 4 4",
  connections: "M9 3v5M15 3v5M6 8h12v3a6 6 0 0 1-12 0zM12 17v4",
  plus: "M12 5v14M5 12h14",
  edit: "M4 20h4L19 9l-4-4L4 16zM13 7l4 4",
  done: "M5 12.5l4.5 4.5L19 7",
  export: "M12 3v11M7.5 9.5 12 14l4.5-4.5M5 17v3h14v-3",
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name }: { name: IconName }) {
  return (
    <svg className="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
