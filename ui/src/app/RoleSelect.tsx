import type { Role } from "../bindings";
import { useT } from "./useT";

const ROLES: Role[] = ["system", "user", "assistant"];

/** The role of a template or lorebook entry (a session message may also be `tool`). */
export function RoleSelect({
  value,
  onChange,
  withTool = false,
  label,
  testId,
}: {
  value: Role;
  onChange: (role: Role) => void;
  withTool?: boolean;
  label?: string;
  testId?: string;
}) {
  const t = useT();
  return (
    <select
      value={value}
      aria-label={label}
      data-testid={testId}
      onChange={(e) => onChange(e.target.value as Role)}
    >
      {(withTool ? [...ROLES, "tool" as const] : ROLES).map((r) => (
        <option key={r} value={r}>
          {t(`role.${r}`)}
        </option>
      ))}
    </select>
  );
}
