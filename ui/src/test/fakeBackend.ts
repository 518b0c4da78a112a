// A stand-in for the Rust commands in component tests: a small in-memory store and a preview
// that lists the enabled steps with their placement, so tests can see edits reach the backend.
import { mockIPC } from "@tauri-apps/api/mocks";
import type { AgentPreset } from "../bindings";
import type { Chat, Preset } from "../app/model";

export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

export function samplePreset(): Preset {
  return {
    formatVersion: 1,
    id: "helper",
    name: "Helper",
    messageTemplates: [
      { id: "main", name: "Main prompt", role: "system", content: "You are {{char}}." },
      { id: "chat", role: "user", type: "chat_history" },
      { id: "style", name: "Style note", role: "system", content: "Be brief." },
    ],
    contextRecipes: [
      {
        id: "all",
        name: "Everyone",
        modelFilter: ["*"],
        steps: [
          { messageId: "main", enabled: true },
          { messageId: "chat", enabled: true },
          { messageId: "style", enabled: true },
        ],
      },
    ],
  } as Preset;
}

export function sampleSession(): Chat {
  return {
    formatVersion: 1,
    id: "chat-1",
    title: "Chat one",
    messages: [
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi there" },
    ],
  } as Chat;
}

export function fakeBackend() {
  const calls: Call[] = [];
  const presets = new Map<string, Preset>([["helper", samplePreset()]]);
  const sessions = new Map<string, Chat>([["chat-1", sampleSession()]]);
  mockIPC((cmd, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    switch (cmd) {
      case "list_presets":
        return [...presets.values()].map((p) => ({ id: p.id, name: p.name, updatedAt: 0 }));
      case "list_sessions":
        return [...sessions.values()].map((s) => ({ id: s.id, name: s.title ?? s.id, updatedAt: 0 }));
      case "known_models":
        return ["gpt-4o", "claude-3-5-sonnet"];
      case "get_setting":
        return null;
      case "set_setting":
        return null;
      case "get_preset":
        return presets.get(args.id as string);
      case "save_preset":
        presets.set((args.preset as Preset).id, args.preset as Preset);
        return null;
      case "delete_preset":
        presets.delete(args.id as string);
        return null;
      case "get_session":
        return sessions.get(args.id as string);
      case "save_session":
        sessions.set((args.session as Chat).id, args.session as Chat);
        return null;
      case "inspect_import":
        if (String(args.path).endsWith(".txt")) throw { code: "unknown_format", message: `${args.path}: not a file Promptloom reads` };
        return {
          format: "SillyTavern chat-completion preset",
          kind: "preset",
          name: "Default",
          needsPreset: false,
          notMapped: [{ item: "temperature, top_p", message: "sampling settings are not part of a preset" }],
        };
      case "import_file": {
        const imported = { ...samplePreset(), id: "default", name: "Default" };
        presets.set(imported.id, imported);
        return { kind: "preset", id: imported.id };
      }
      case "preview": {
        const request = args.request as { preset: AgentPreset; model: string; sessionId: string | null };
        const session = request.sessionId ? sessions.get(request.sessionId) : undefined;
        return fakePreview(request, session?.messages.map((m) => m.content) ?? []);
      }
      default:
        throw { code: "unknown", message: `no fake for ${cmd}` };
    }
  });
  return { calls, presets, sessions };
}

/** Entries fire when a key occurs in a message: enough to show the report, not the engine's rules. */
function fakeLorebook(preset: AgentPreset, history: string[]) {
  const entries = preset.lorebook?.entries ?? [];
  if (entries.length === 0) return null;
  const activated = [];
  for (const e of entries) {
    if (e.enabled === false) continue;
    for (const key of e.keys ?? []) {
      const at = history.findIndex((h) => h.toLowerCase().includes(key.toLowerCase()));
      if (at >= 0) {
        activated.push({ entryId: e.id, name: e.name, reason: { kind: "key", key, historyIndex: at }, tokens: 7 });
        break;
      }
    }
  }
  return { activated, cut: [], budget: 32 };
}

function fakePreview({ preset, model }: { preset: AgentPreset; model: string }, history: string[]) {
  const recipe = (preset.contextRecipes ?? [])[0];
  if (!recipe) throw { code: "no_recipe", message: "no recipe" };
  const messages = recipe.steps
    .filter((s) => s.enabled)
    .map((s) => {
      const t = (preset.messageTemplates ?? []).find((m) => m.id === s.messageId);
      const depth = s.injectionStrategy?.depth;
      return {
        role: t?.role ?? "system",
        content: t?.content ?? "",
        tokens: 5,
        source: {
          kind: "template",
          templateId: s.messageId,
          placement: depth !== undefined && depth !== null ? { mode: "depth", depth } : { mode: "list" },
        },
      };
    });
  return {
    result: {
      recipe: recipe.id,
      model,
      profile: "openai-gpt-4o",
      messages,
      tokens: {
        total: messages.length * 5 + 3,
        budget: 100,
        exact: true,
        tokenizer: "o200k_base",
        contextWindow: 128,
        reservedReply: 28,
        bySource: { template: messages.length * 5 },
      },
      dropped: [
        {
          processor: "token-limiter",
          action: "dropped",
          source: { kind: "history", historyIndex: 0, placement: { mode: "list" } },
          count: 2,
          reason: "over the budget",
        },
      ],
      warnings: [],
      logs: [{ processor: "token-limiter", level: "info", message: "2 history messages dropped" }],
      variables: {},
      lorebook: fakeLorebook(preset, history),
    },
    anchors: ["chat_history", "user_profile"],
    tokenizer: "o200k_base",
    exact: true,
    buildMs: 0.5,
    elided: [],
  };
}
