import type { Role } from "../bindings";
import { useT } from "./useT";

// Letters, not emoji: they render in every font the app may fall back to.
const ICONS: Record<string, string> = { system: "S", user: "U", assistant: "A", tool: "T" };

export function RoleIcon({ role }: { role: Role | "tool" }) {
  const t = useT();
  return (
    <span className={`role role-${role}`} title={t(`role.${role}`)} aria-label={t(`role.${role}`)}>
      {ICONS[role] ?? "?"}
    </span>
  );
}
