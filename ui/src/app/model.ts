// The documents as the app holds them: the backend always sends presets with their templates
// and recipes and sessions with their messages; the generated types keep those optional only
// because the JSON formats accept documents without them.
import type { AgentPreset, Session } from "../bindings";

export type Preset = AgentPreset & Required<Pick<AgentPreset, "messageTemplates" | "contextRecipes">>;
export type Chat = Session & Required<Pick<Session, "messages">>;

export function asPreset(p: AgentPreset): Preset {
  return { ...p, messageTemplates: p.messageTemplates ?? [], contextRecipes: p.contextRecipes ?? [] };
}

export function asChat(s: Session): Chat {
  return { ...s, messages: s.messages ?? [] };
}
