// A stand-in for the Rust commands in component tests: a small in-memory store and a preview
// that lists the enabled steps with their placement, so tests can see edits reach the backend.
// Tests steer it: what the native dialogs answer, commands that fail the next N times, another
// program saving a preset, a file dropped on the window, the window asked to close, answers held
// back until the test lets them through, history left out of the preview as the engine does.
// The live preview's `preview_draft` keeps a draft as the shell does; its calls are logged, held
// and failed as `preview` calls of the preset the edit leaves, and its edits are kept apart.
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import type {
  AgentPreset,
  AppError,
  BuiltMessage,
  CacheBreakpoint,
  Changes,
  ChangesRequest,
  ChatMessage,
  DiffRow,
  ChosenFile,
  ConnectionDoc,
  DraftPreviewRequest,
  ExportFormat,
  ImportOutcome,
  ImportPreview,
  InstructTemplate,
  JinjaCheck,
  LorebookChoice,
  LorebookTest,
  LorebookTestRequest,
  MacroTrace,
  PresetChange,
  PresetEdit,
  RenderedPrompt,
  Said,
  SendEvent,
  SendRequest,
  Sent,
  PreviewRequest,
} from "../bindings";
import type { Channel } from "@tauri-apps/api/core";
import type { Chat, Preset } from "../app/model";

export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

/** A file the user could choose or drop, with what inspecting and importing it give. */
export interface FakeFile {
  name: string;
  /** What `inspect_import` returns; by default a SillyTavern preset, or an error for a `.txt`. */
  preview?: ImportPreview;
  /** What `import_file` does; by default a new preset `default`. */
  importAs?: (into: string | null, lorebook: LorebookChoice) => ImportOutcome;
}

/** The file name Rust proposes in the save dialog. */
const SUFFIX: Record<ExportFormat, string> = {
  native: ".json",
  sillyTavernPreset: ".st-preset.json",
  sillyTavernCard: ".card.json",
  sillyTavernWorldInfo: ".world-info.json",
};

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
  /** Each preset's revision: every save moves it on; a save over an older one is a conflict. */
  const revisions = new Map<string, number>([["helper", 1]]);
  const sessions = new Map<string, Chat>([["chat-1", sampleSession()]]);
  // The first-run tour was seen: it would stand over the panes other tests look at; the tour's
  // own tests delete the setting.
  const settings = new Map<string, string>([["ui.tourSeen", "1"]]);
  /** What the About dialog reads. */
  const about: import("../bindings").About = {
    version: "0.1.0",
    commit: "269d4c6a1b2c3d4e5f60718293a4b5c6d7e8f901",
    dirty: false,
    versionLine: "0.1.0 (269d4c6a1b2c)",
    databasePath: "/home/someone/.local/share/promptloom/promptloom.db",
  };
  /** What the export commands wrote, by path. */
  const exported = new Map<string, { format: string; preset?: AgentPreset; session?: Chat }>();
  /** The files chosen or dropped so far, by the id the page names them by. */
  const files = new Map<number, FakeFile>();
  /**
   * What the native dialogs answer next: the file to open, the path to save to (by default
   * `/tmp/` and the name Rust proposes); null is the user cancelling.
   */
  const dialogs: { open: FakeFile | null; save: string | null | undefined } = {
    open: { name: "Default.json" },
    save: undefined,
  };
  const failing = new Map<string, { count: number; error: AppError }>();
  /** Commands whose answers wait, while `when` holds for the call, until the test releases them. */
  const held = new Map<string, { when: (args: Record<string, unknown>) => boolean; gate: Promise<void> }>();
  /**
   * `elideHistory`: the preview leaves the session's messages out and sends runs in their place
   * (`Preview::elided`), as the backend does for history sent exactly as stored.
   */
  const options = { elideHistory: false };
  /**
   * What `check_chat_template` answers: by default "identical" for a template that mentions
   * `im_start`, an error for one that does not parse (an unclosed `{%`), else a difference at
   * the first byte. A test can replace it.
   */
  const instruct = {
    check(args: { chatTemplate: string; bos: string; eos: string }): JinjaCheck {
      if (/\{%(?![\s\S]*%\})/.test(args.chatTemplate)) {
        throw { code: "invalid_document", message: 'chat template "pasted": line 1: unexpected end of input' };
      }
      const ours = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n";
      if (args.chatTemplate.includes("im_start")) return { ours, theirs: ours, firstDifference: null };
      const theirs = `${args.bos}[INST] Hello [/INST]`;
      return { ours, theirs, firstDifference: 0 };
    },
  };
  /** The connections kept, by name, and the names whose key is in the (fake) keychain. */
  const connections = new Map<string, ConnectionDoc>();
  const keys = new Set<string>();
  /**
   * What `send_message` streams, part by part, and the provider's prompt tokens. While `gate`
   * is set, the reply waits for it after streaming (a test sees the reply arriving); `stop_sending`
   * opens it and the reply is kept as far as it came, marked incomplete. With `error`, the send
   * fails with it after the gate (a provider that gave up late).
   */
  const calibrations = new Map<string, { provider: number; counted: number }[]>();
  const sending: {
    parts: string[];
    promptTokens: number;
    gate: Promise<void> | null;
    stopped: boolean;
    error: AppError | null;
  } = {
    parts: ["Hel", "lo ", "back"],
    promptTokens: 11,
    gate: null,
    stopped: false,
    error: null,
  };
  let stopSend = () => {};
  /**
   * What `count_exactly` answers, as the backend does: the provider's count (by default ours
   * plus 7) for a connection that can count and has a key, kept per content, so that the same
   * request asked again is answered without a provider request; `requests` counts those made.
   */
  const counting: { tokens: number | null; requests: number; kept: Map<string, number> } = {
    tokens: null,
    requests: 0,
    kept: new Map(),
  };
  /** What `changes` answers: by default the two fake builds lined up (`fakeChanges`); a test can
   * answer instead. */
  const changing: { answer: ((request: ChangesRequest) => Changes) | null } = { answer: null };
  /** The macro trace a preview asked with `traceMacros` carries, and the lorebook tester's answer
   * (none by default: a test gives them). */
  const explaining: {
    trace: MacroTrace | null;
    lorebook: ((request: LorebookTestRequest) => LorebookTest) | null;
  } = { trace: null, lorebook: null };

  const choose = (file: FakeFile): ChosenFile => {
    const id = files.size + 1;
    files.set(id, file);
    return { id, name: file.name };
  };
  const savePath = (proposed: string) => (dialogs.save === undefined ? `/tmp/${proposed}` : dialogs.save);

  /** The live preview's draft, as the shell keeps it (`promptloom_library::drafts`). */
  let draft: { revision: number; preset: AgentPreset } | null = null;
  /** Every edit `preview_draft` received. */
  const edits: PresetEdit[] = [];
  const applyDraft = (edit: PresetEdit): AgentPreset => {
    edits.push(edit);
    const base = draft;
    draft = null;
    let preset: AgentPreset;
    if (edit.kind === "whole") preset = edit.preset;
    else if (base?.revision === edit.base) preset = edit.changes.reduce(applyChange, base.preset);
    else throw { code: "stale_draft", message: `the preview's draft is out of date: an edit of draft ${edit.base}` };
    draft = { revision: edit.revision, preset };
    return preset;
  };

  mockWindows("main");
  mockIPC(
    (command, payload) => {
      let cmd = command;
      let args = (payload ?? {}) as Record<string, unknown>;
      if (cmd === "preview_draft") {
        const { edit, ...rest } = args.request as DraftPreviewRequest;
        cmd = "preview";
        args = { request: { ...rest, preset: applyDraft(edit) } };
      }
      calls.push({ cmd, args });
      const hold = held.get(cmd);
      if (hold?.when(args)) return hold.gate.then(() => respond(cmd, args));
      return respond(cmd, args);
    },
    { shouldMockEvents: true },
  );

  function respond(cmd: string, args: Record<string, unknown>): unknown {
    const failure = failing.get(cmd);
    if (failure && failure.count > 0) {
      failure.count -= 1;
      throw failure.error;
    }
    return answer(cmd, args);
  }

  function answer(cmd: string, args: Record<string, unknown>): unknown {
    switch (cmd) {
      case "list_presets":
        return [...presets.values()].map((p) => ({ id: p.id, name: p.name, updatedAt: 0 }));
      case "list_sessions":
        return [...sessions.values()].map((s) => ({ id: s.id, name: s.title ?? s.id, updatedAt: 0 }));
      case "known_models":
        return ["gpt-4o", "claude-3-5-sonnet"];
      case "get_setting":
        return settings.get(args.key as string) ?? null;
      case "set_setting":
        settings.set(args.key as string, args.value as string);
        return null;
      case "about":
        return { ...about };
      case "open_database_folder":
        return null;
      case "get_preset": {
        const preset = presets.get(args.id as string);
        if (!preset) throw { code: "not_found", message: `no preset ${args.id}` };
        return { preset, revision: revisions.get(preset.id) ?? 1 };
      }
      case "save_preset": {
        const preset = args.preset as Preset;
        const opened = args.revision as number | null;
        const stored = revisions.get(preset.id);
        if (opened !== null && stored !== undefined && opened !== stored) {
          throw {
            code: "conflict",
            message: `preset "${preset.id}" was changed by another program since it was opened (revision ${stored}, opened at ${opened})`,
          };
        }
        presets.set(preset.id, preset);
        revisions.set(preset.id, (stored ?? 0) + 1);
        return revisions.get(preset.id);
      }
      case "delete_preset":
        presets.delete(args.id as string);
        revisions.delete(args.id as string);
        return null;
      case "create_session": {
        // As the application layer does: a free id from the title, the greeting of the preset's
        // character as it is stored.
        const title = args.title as string;
        let id = title.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-") || "session";
        while (sessions.has(id)) id += "-2";
        const greeting = args.preset ? presets.get(args.preset as string)?.character?.greeting : undefined;
        const session = {
          formatVersion: 1,
          id,
          title,
          messages: greeting ? [{ id: "greeting", role: "assistant", content: greeting }] : [],
        } as unknown as Chat;
        sessions.set(id, session);
        return session;
      }
      case "get_session":
        return sessions.get(args.id as string);
      case "save_session":
        sessions.set((args.session as Chat).id, args.session as Chat);
        return null;
      case "choose_import_file":
        return dialogs.open ? choose(dialogs.open) : null;
      case "inspect_import": {
        const file = files.get(args.file as number);
        if (!file) throw { code: "not_found", message: `no chosen file ${args.file}` };
        if (file.preview) return file.preview;
        if (file.name.endsWith(".txt")) throw { code: "unknown_format", message: `${file.name}: not a file Promptloom reads` };
        return {
          format: "SillyTavern chat-completion preset",
          formatSaid: said("import.format.sillytavern-preset"),
          kind: "preset",
          name: "Default",
          nameSaid: null,
          needsPreset: false,
          notMapped: [
            {
              item: "temperature, top_p",
              message: "not mapped (sampler, API and formatting settings of SillyTavern)",
              said: said("import.preset-settings"),
            },
          ],
        };
      }
      case "import_file": {
        const file = files.get(args.file as number);
        if (!file) throw { code: "not_found", message: `no chosen file ${args.file}` };
        if (file.importAs) return file.importAs(args.into as string | null, args.lorebook as LorebookChoice);
        const imported = { ...samplePreset(), id: "default", name: "Default" };
        presets.set(imported.id, imported);
        revisions.set(imported.id, 1);
        return { kind: "preset", id: imported.id, notes: [], notesSaid: [] };
      }
      case "export_preset": {
        const preset = args.preset as AgentPreset;
        const format = args.format as string;
        if (format === "sillyTavernCard" && !preset.character)
          throw { code: "nothing_to_export", message: `preset "${preset.id}" has no character to export as a card` };
        if (format === "sillyTavernWorldInfo" && !preset.lorebook)
          throw { code: "nothing_to_export", message: `preset "${preset.id}" has no lorebook to export as world info` };
        const path = savePath(preset.id + SUFFIX[format as ExportFormat]);
        if (path === null) return null;
        exported.set(path, { format, preset });
        const notMapped =
          format === "sillyTavernPreset"
            ? [
                {
                  item: "recipe all",
                  message: "not exported: a SillyTavern preset has one prompt order",
                  said: said("export.other-recipe"),
                },
              ]
            : [];
        return { path, notMapped };
      }
      case "export_session": {
        if (!sessions.has(args.id as string)) throw { code: "not_found", message: `no session ${args.id}` };
        const path = savePath(`${args.id}.json`);
        if (path === null) return null;
        exported.set(path, { format: "session", session: sessions.get(args.id as string) });
        return { path, notMapped: [] };
      }
      case "preview": {
        const request = args.request as { preset: AgentPreset; model: string; sessionId: string | null };
        const session = request.sessionId ? sessions.get(request.sessionId) : undefined;
        const history = session?.messages.map((m) => m.content) ?? [];
        const built = withGeneration(fakePreview(request, history), args.request as PreviewRequest);
        const preview = { ...built, macros: (args.request as PreviewRequest).traceMacros ? explaining.trace : null };
        return options.elideHistory ? elide(preview, history.length) : preview;
      }
      case "changes": {
        const request = args.request as ChangesRequest;
        if (changing.answer) return changing.answer(request);
        return fakeChanges(request, (id) => (id ? sessions.get(id) : undefined));
      }
      case "lorebook_test": {
        if (!explaining.lorebook) throw { code: "internal", message: "no lorebook test answer" };
        return explaining.lorebook(args.request as LorebookTestRequest);
      }
      case "instruct_templates":
        return FAKE_INSTRUCT_TEMPLATES;
      case "check_chat_template":
        return instruct.check(args as { chatTemplate: string; bos: string; eos: string });
      case "recipe_matches":
        return fakeRecipeMatches(args.preset as AgentPreset, args.models as string[]);
      case "pipeline":
        if (args.model === "broken") throw { code: "profile", message: "no model profile for broken" };
        return fakePipeline(args.preset as AgentPreset, args.model as string);
      case "plugin:window|destroy":
        return null;
      case "provider_request":
        return JSON.stringify({ model: (args.request as { model: string }).model }, null, 2) + "\n";
      case "list_connections":
        return [...connections.values()].map((c) => ({
          connection: c,
          hasKey: keys.has(c.name),
          keyProblem: null,
          // As the backend says: the dialects with a counting endpoint count their own format.
          counts: c.dialect === "anthropic" ? "anthropic-messages" : c.dialect === "gemini" ? "gemini" : null,
        }));
      case "well_known_connections":
        return [
          { name: "openai", dialect: "openai", baseUrl: "https://api.openai.com/v1" },
          { name: "openrouter", dialect: "openai-compatible", baseUrl: "https://openrouter.ai/api/v1" },
        ];
      case "save_connection": {
        const c = args.connection as ConnectionDoc;
        if (!c.name) throw { code: "invalid_connection", message: "a connection needs a name" };
        if (!/^https?:\/\//.test(c.baseUrl)) {
          throw { code: "invalid_connection", message: `connection "${c.name}": base URL "${c.baseUrl}" is not http(s)` };
        }
        connections.set(c.name, c);
        return null;
      }
      case "delete_connection":
        connections.delete(args.name as string);
        keys.delete(args.name as string);
        return null;
      case "set_connection_key":
        if (!connections.has(args.name as string)) throw { code: "not_found", message: `no connection ${args.name}` };
        keys.add(args.name as string);
        return null;
      case "connection_request": {
        const c = connections.get(args.connection as string);
        if (!c) throw { code: "not_found", message: `no connection ${args.connection}` };
        const request = args.request as { model: string; input: string | null };
        return {
          url: `${c.baseUrl}/chat/completions`,
          headers: [["authorization", keys.has(c.name) ? "Bearer ••••" : ""], ["content-type", "application/json"]],
          body: JSON.stringify({ model: request.model, input: request.input, stream: true }, null, 2) + "\n",
        };
      }
      case "count_exactly": {
        const c = connections.get(args.connection as string);
        if (!c) throw { code: "not_found", message: `no connection "${args.connection}"` };
        if (c.dialect !== "anthropic" && c.dialect !== "gemini")
          throw { code: "invalid_connection", message: `connection "${c.name}" (${c.dialect}) has no token-counting endpoint` };
        if (!keys.has(c.name)) throw { code: "missing_key", message: `connection "${c.name}" (${c.dialect}) needs an API key` };
        const request = args.request as { preset: AgentPreset; model: string; sessionId: string | null; input: string | null };
        const session = request.sessionId ? sessions.get(request.sessionId) : undefined;
        const history = session?.messages.map((m) => m.content) ?? [];
        const counted = fakePreview(request, history).result.tokens.total;
        const content = JSON.stringify([c.baseUrl, c.dialect, request.model, request.preset, history, request.input]);
        const provider = c.dialect === "anthropic" ? "Anthropic count_tokens" : "Gemini countTokens";
        const kept = counting.kept.get(content);
        if (kept !== undefined) return { tokens: kept, counted, cached: true, provider };
        counting.requests += 1;
        const tokens = counting.tokens ?? counted + 7;
        counting.kept.set(content, tokens);
        return { tokens, counted, cached: false, provider };
      }
      case "send_message":
        return fakeSend(args.request as SendRequest, args.events as Channel<SendEvent>);
      case "stop_sending":
        sending.stopped = true;
        stopSend();
        return null;
      case "calibration": {
        // As the backend keeps them: per model, the provider's count against ours.
        const kept = calibrations.get(args.model as string) ?? [];
        const last = kept.at(-1);
        const diffs = kept.map((k) => ((k.provider - k.counted) / k.counted) * 100);
        return {
          samples: kept.length,
          lastProvider: last?.provider ?? null,
          lastCounted: last?.counted ?? null,
          meanDifferencePercent: diffs.length ? diffs.reduce((a, b) => a + b, 0) / diffs.length : null,
        };
      }
      case "choose_swipe": {
        // As the backend does: every reply in order, the shown one at its place; show `swipe`.
        const session = sessions.get(args.session as string)!;
        const message = session.messages[args.at as number];
        const others = message?.swipes ?? [];
        const all = [...others];
        all.splice(Math.min(message?.swipeAt ?? others.length, others.length), 0, {
          content: message?.content ?? "",
          reply: message?.reply ?? null,
        });
        const position = args.swipe as number;
        if (!message || !others.length || position >= all.length)
          throw { code: "not_found", message: `no reply ${position} of message ${args.at}` };
        const [shown] = all.splice(position, 1);
        const flipped = {
          ...message,
          content: shown.content,
          reply: shown.reply ?? null,
          swipes: all,
          swipeAt: position === all.length ? null : position,
        };
        const stored = { ...session, messages: session.messages.map((m, i) => (i === args.at ? flipped : m)) };
        sessions.set(stored.id, stored);
        return stored;
      }
      case "session_summaries":
        return [];
      case "memory_status":
        return { model: null, connection: null, dim: 0, indexed: 0, messages: 0, pending: 0 };
      default:
        throw { code: "unknown", message: `no fake for ${cmd}` };
    }
  }

  /**
   * As the backend does: streams the parts, then keeps the reply as its kind says (RULES 5.14):
   * the next turn (or the regenerated reply), more of the last reply after a space, or, for an
   * impersonation, nowhere. The prefill goes first.
   */
  async function fakeSend(request: SendRequest, events: Channel<SendEvent>): Promise<Sent> {
    const id = request.preview.sessionId;
    const session = id ? sessions.get(id) : undefined;
    if (!session) throw { code: "not_found", message: "open or create a session to send into" };
    const connection = connections.get(request.connection);
    if (!connection) throw { code: "not_found", message: `no connection "${request.connection}"` };
    if (!keys.has(connection.name)) throw { code: "no_key", message: `connection "${connection.name}" has no key` };
    const kind = request.regenerate ? "normal" : request.preview.generationType;
    if (kind === "continue" && session.messages.at(-1)?.role !== "assistant")
      throw { code: "not_found", message: `session "${session.id}" has no reply to continue` };
    const start = kind === "continue" ? " " : kind === "quiet" ? "" : (request.preview.prefill ?? "");
    sending.stopped = false;
    events.onmessage({ kind: "started", url: `${connection.baseUrl}/chat/completions`, start });
    let text = "";
    for (const part of sending.parts) {
      await Promise.resolve();
      text += part;
      events.onmessage({ kind: "text", text: part });
    }
    if (sending.gate) {
      const gate = sending.gate;
      await new Promise<void>((resolve) => {
        stopSend = resolve;
        void gate.then(resolve);
      });
    }
    if (sending.error) throw sending.error;
    // As the backend does: stopped before any text came, there is no reply to keep.
    if (sending.stopped && text === "") return { session, text: "" };
    text = start + text;
    const reply = {
      connection: connection.name,
      model: request.preview.model,
      finishReason: sending.stopped ? null : "stop",
      promptTokens: sending.stopped ? null : sending.promptTokens,
      completionTokens: sending.stopped ? null : sending.parts.length,
      countedPromptTokens: 12,
      totalMs: 250,
      incomplete: sending.stopped,
    };
    if (reply.promptTokens !== null) {
      const kept = calibrations.get(reply.model) ?? [];
      calibrations.set(reply.model, [...kept, { provider: reply.promptTokens, counted: reply.countedPromptTokens }]);
    }
    if (kind === "impersonate" || kind === "quiet") return { session, text };
    const messages: ChatMessage[] = [...session.messages];
    if (kind === "continue") {
      const last = messages[messages.length - 1]!;
      messages[messages.length - 1] = { ...last, content: last.content + text, reply };
    } else if (request.regenerate) {
      const last = messages[messages.length - 1]!;
      messages[messages.length - 1] = {
        ...last,
        content: text,
        reply,
        // Every reply in order (the shown one at its place), the new one last and shown.
        swipes: (() => {
          const all = [...(last.swipes ?? [])];
          all.splice(Math.min(last.swipeAt ?? all.length, all.length), 0, {
            content: last.content,
            reply: last.reply ?? null,
          });
          return all;
        })(),
        swipeAt: null,
      };
    } else {
      const input = request.preview.input?.trim();
      if (input) messages.push({ role: "user", content: input });
      messages.push({ role: "assistant", content: text, reply });
    }
    const stored = { ...session, messages } as Chat;
    sessions.set(stored.id, stored);
    return { session: stored, text };
  }

  return {
    calls,
    connections,
    keys,
    sending,
    counting,
    presets,
    revisions,
    sessions,
    settings,
    about,
    exported,
    dialogs,
    edits,
    /** The app started again: the live preview's draft is gone. */
    forgetDraft() {
      draft = null;
    },
    /** Command `cmd` fails the next `count` times with `error`. */
    fail(cmd: string, count: number, error: AppError) {
      failing.set(cmd, { count, error });
    },
    /** Another program saves `preset` (a command-line import): its revision moves on. */
    storeElsewhere(preset: Preset) {
      presets.set(preset.id, preset);
      revisions.set(preset.id, (revisions.get(preset.id) ?? 0) + 1);
    },
    options,
    instruct,
    changing,
    explaining,
    /**
     * The answers to `cmd` (those to calls `when` picks) wait until the returned release is
     * called; from then on it answers at once again.
     */
    hold(cmd: string, when: (args: Record<string, unknown>) => boolean = () => true): () => void {
      let release = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      held.set(cmd, { when, gate });
      return () => {
        held.delete(cmd);
        release();
      };
    },
    /** `file` dropped on the window: registered like a chosen one, announced by the event. */
    async drop(file: FakeFile): Promise<ChosenFile> {
      const chosen = choose(file);
      await emit("file-dropped", { file: chosen });
      return chosen;
    },
    /** The user closes the window (the title bar's button). */
    async requestClose() {
      await emit("tauri://close-requested", null);
    },
  };
}

/**
 * The two builds of a `changes` request lined up as the engine does, in small: messages paired by
 * source (a longest common subsequence), `same` when role and text agree, else `changed` with
 * the common head and tail as equal pieces; the previous turn is the session without its newest
 * user message and what follows it.
 */
function fakeChanges(request: ChangesRequest, session: (id: string | null) => Chat | undefined): Changes {
  const historyOf = (messages: ChatMessage[] | undefined) => messages?.map((m) => m.content) ?? [];
  const now = session(request.request.sessionId);
  const right = fakePreview(request.request, historyOf(now?.messages));
  const against = request.against;
  let left: ReturnType<typeof fakePreview>;
  if (against.kind === "previousTurn") {
    const messages = now?.messages ?? [];
    const at = messages.map((m) => m.role).lastIndexOf("user");
    if (at < 0) {
      throw {
        code: "invalid_document",
        message: `session "${now?.id ?? "(no session)"}": it has no user message, so there is no earlier turn to compare with`,
      };
    }
    left = fakePreview({ ...request.request, input: null } as typeof request.request, historyOf(messages.slice(0, at)));
  } else if (against.kind === "request") {
    left = fakePreview(against.request, historyOf(session(against.request.sessionId)?.messages));
  } else {
    left = fakePreview(request.request, historyOf(now?.messages));
  }
  const l = left.result.messages as BuiltMessage[];
  const r = right.result.messages as BuiltMessage[];
  const key = (m: BuiltMessage) => {
    const s = m.source;
    return `${s.kind}:${s.templateId ?? s.processor ?? s.entryId ?? s.historyIndex ?? ""}`;
  };
  // best[i][j]: the most pairs of left[i..] and right[j..].
  const best = Array.from({ length: l.length + 1 }, () => new Array<number>(r.length + 1).fill(0));
  for (let i = l.length - 1; i >= 0; i--) {
    for (let j = r.length - 1; j >= 0; j--) {
      best[i]![j] = key(l[i]!) === key(r[j]!) ? best[i + 1]![j + 1]! + 1 : Math.max(best[i + 1]![j]!, best[i]![j + 1]!);
    }
  }
  const rows: DiffRow[] = [];
  const row = (kind: DiffRow["kind"], i: number | null, j: number | null): DiffRow => {
    const a = i === null ? null : l[i]!;
    const b = j === null ? null : r[j]!;
    const shown = (b ?? a)!;
    const base = {
      kind,
      left: i,
      right: j,
      role: shown.role,
      source: shown.source,
      leftTokens: a?.tokens ?? 0,
      rightTokens: b?.tokens ?? 0,
      tokenDelta: (b?.tokens ?? 0) - (a?.tokens ?? 0),
    };
    if (kind === "changed") return { ...base, changes: fakeTextChanges(a!.content, b!.content) };
    if (kind === "same") return base;
    return { ...base, text: shown.content };
  };
  let i = 0;
  let j = 0;
  while (i < l.length || j < r.length) {
    if (i < l.length && j < r.length && key(l[i]!) === key(r[j]!)) {
      const same = l[i]!.role === r[j]!.role && l[i]!.content === r[j]!.content;
      rows.push(row(same ? "same" : "changed", i++, j++));
    } else if (j >= r.length || (i < l.length && best[i + 1]![j]! >= best[i]![j + 1]!)) rows.push(row("left", i++, null));
    else rows.push(row("right", null, j++));
  }
  const first = rows.findIndex((x) => x.kind !== "same");
  const firstRight = first < 0 ? null : (rows.slice(first).find((x) => x.right !== null)?.right ?? r.length);
  const stable = rows.slice(0, first < 0 ? rows.length : first);
  const cause = (x: DiffRow) =>
    x.source.kind === "template" || x.source.kind === "history" ? x.source.kind : x.source.kind === "lorebook" ? `lorebook:${x.source.entryId}` : "other";
  const side = (p: ReturnType<typeof fakePreview>) => ({
    model: p.result.model,
    recipe: p.result.recipe,
    messages: p.result.messages.length,
  });
  return {
    diff: {
      stablePrefix: {
        tokens: stable.reduce((n, x) => n + x.rightTokens, 0),
        bytes: stable.reduce((n, x) => n + new TextEncoder().encode(r[x.right!]!.content).length, 0),
      },
      firstDifference:
        first < 0
          ? null
          : { row: first, messageIndex: firstRight, offset: 0, source: rows[first]!.source, cause: cause(rows[first]!) },
      messages: rows,
      leftTokens: left.result.tokens.total,
      rightTokens: right.result.tokens.total,
      breakpoints: ((right.result as { cacheBreakpoints?: CacheBreakpoint[] }).cacheBreakpoints ?? []).map((b) => ({
        ...b,
        stable: firstRight === null || b.messageIndex < firstRight,
      })),
    },
    left: side(left),
    right: side(right),
  };
}

/** The common head and tail of two texts as equal pieces, the middle deleted and inserted. */
function fakeTextChanges(a: string, b: string) {
  let head = 0;
  while (head < Math.min(a.length, b.length) && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < Math.min(a.length, b.length) - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const pieces = [
    { op: "equal", text: a.slice(0, head) },
    { op: "delete", text: a.slice(head, a.length - tail) },
    { op: "insert", text: b.slice(head, b.length - tail) },
    { op: "equal", text: a.slice(a.length - tail) },
  ] as const;
  return pieces.filter((p) => p.text !== "");
}

/** `preset` with the item `change` names replaced, as the shell's draft does. */
function applyChange(preset: AgentPreset, change: PresetChange): AgentPreset {
  const put = <T,>(list: T[] | undefined, index: number, item: T) => {
    if (!list || index >= list.length) throw { code: "stale_draft", message: `no item ${index} in the draft` };
    return list.map((x, i) => (i === index ? item : x));
  };
  switch (change.kind) {
    case "template":
      return { ...preset, messageTemplates: put(preset.messageTemplates, change.index, change.template) };
    case "recipe":
      return { ...preset, contextRecipes: put(preset.contextRecipes, change.index, change.recipe) };
    case "lorebookEntry":
      if (!preset.lorebook) throw { code: "stale_draft", message: "no lorebook in the draft" };
      return { ...preset, lorebook: { ...preset.lorebook, entries: put(preset.lorebook.entries, change.index, change.entry) } };
  }
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

/**
 * Builds differ by model, so that the preview's comparison has something to show: a Claude model
 * gets the first recipe with a `claude…` filter pattern (else the first recipe), the Anthropic
 * profile, `{{model}}` filled with its id, and an alternation filler at the end.
 */
function fakePreview(request: { preset: AgentPreset; model: string }, history: string[]) {
  if (request.model === "broken") throw { code: "profile", message: "no model profile for broken" };
  const claude = request.model.toLowerCase().startsWith("claude");
  const base = fakeBuild(request, history, claude);
  if (!claude) return base;
  const messages = [
    ...base.result.messages,
    {
      role: "user",
      content: "Continue.",
      tokens: 5,
      exact: false,
      source: { kind: "processor", processor: "role-alternation", placement: { mode: "list" } },
    },
  ];
  const total = messages.length * 5 + 3;
  return {
    ...base,
    result: {
      ...base.result,
      profile: "anthropic-claude",
      messages: messages.map((m) => ({ ...m, exact: false })),
      tokens: { ...base.result.tokens, total, tokenizer: "claude-estimate", exact: false },
      cacheBreakpoints: fakeCacheBreakpoints(messages, base.result.generation?.settings.cacheBreakpoints),
    },
    tokenizer: "claude-estimate",
    exact: false,
    providerFormat: "anthropic-messages",
  };
}

/** Where an Anthropic body marks its cache breakpoints: after the leading system messages, and
 * after the message at each depth (0 the newest). */
function fakeCacheBreakpoints(messages: { role: string }[], asked: import("../bindings").CacheBreakpoints | null | undefined) {
  const marks: import("../bindings").CacheBreakpoint[] = [];
  const system = messages.findIndex((m) => m.role !== "system");
  if (asked?.system && system !== 0) marks.push({ messageIndex: (system < 0 ? messages.length : system) - 1 });
  for (const depth of asked?.depths ?? []) {
    const at = messages.length - 1 - depth;
    if (at >= 0) marks.push({ messageIndex: at, depth });
  }
  return marks;
}

function fakeBuild({ preset, model }: { preset: AgentPreset; model: string }, history: string[], claude: boolean) {
  const recipes = preset.contextRecipes ?? [];
  const recipe =
    (claude ? recipes.find((r) => r.modelFilter.some((p) => p.toLowerCase().startsWith("claude"))) : undefined) ??
    recipes[0];
  if (!recipe) throw { code: "no_recipe", message: "no recipe" };
  const messages = recipe.steps
    .filter((s) => s.enabled)
    .map((s) => {
      const t = (preset.messageTemplates ?? []).find((m) => m.id === s.messageId);
      const depth = s.injectionStrategy?.depth;
      return {
        role: t?.role ?? "system",
        content: (t?.content ?? "").replaceAll("{{model}}", model),
        tokens: 5,
        exact: !claude,
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
          reason: "over the budget of 100 tokens (oldest history first)",
          said: said("token-limiter.dropped", { budget: "100" }),
        },
      ],
      warnings: fakeGenerationWarnings(preset, claude),
      generation: fakeGeneration(preset, claude),
      logs: [
        {
          processor: "session-loader",
          level: "info",
          message: `loaded ${history.length} messages`,
          said: said("session-loader.loaded", { count: String(history.length) }),
        },
      ],
      variables: {},
      lorebook: fakeLorebook(preset, history),
      prompt: preset.instruct ? fakeRender(preset.instruct, messages) : null,
    },
    anchors: ["chat_history", "user_profile"],
    tokenizer: "o200k_base",
    exact: true,
    providerFormat: "openai-chat",
    buildMs: 0.5,
    elided: [],
  };
}

/** What a kind of generation adds at the end, as the assembler does (RULES 5.14): the
 * impersonation prompt, then the prefill as the last assistant message. */
function withGeneration<P extends { result: { messages: unknown[] } }>(preview: P, request: PreviewRequest): P {
  const added = [];
  const generation = { kind: "processor", processor: "injection-assembler", placement: { mode: "list" } };
  if (request.generationType === "impersonate")
    added.push({ role: "system", content: "Write the user's next message.", tokens: 5, exact: true, source: generation });
  const prefill = request.generationType === "continue" ? "" : (request.prefill ?? "").trim();
  if (prefill) added.push({ role: "assistant", content: prefill, tokens: 2, exact: true, source: generation });
  if (!added.length) return preview;
  return { ...preview, result: { ...preview.result, messages: [...preview.result.messages, ...added] } };
}

/** The chat history step's message gives way to a run of the session's `count` messages, left
 * out as the backend leaves out history sent exactly as stored. */
function elide<P extends ReturnType<typeof fakePreview>>(preview: P, count: number): P {
  const messages = preview.result.messages;
  const at = messages.findIndex((m) => (m.source as { templateId?: string }).templateId === "chat");
  if (at < 0) return preview;
  return {
    ...preview,
    result: { ...preview.result, messages: messages.filter((_, i) => i !== at) },
    elided: [{ at, historyIndex: 0, tokens: Array.from({ length: count }, () => 3), exact: true }],
  };
}

/** Glob patterns ranked by their literal characters, a pattern with a space refused: the
 * engine's rules in small. */
function fakeRecipeMatches(preset: AgentPreset, models: string[]) {
  const recipes = preset.contextRecipes ?? [];
  const rank = (pattern: string, model: string) => {
    const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "i");
    return re.test(model) ? pattern.replace(/[*?]/g, "").length + (/[*?]/.test(pattern) ? 0 : 1000) : -1;
  };
  return {
    models: models.map((model) => {
      let best: { rank: number; id: string } | null = null;
      for (const r of recipes) {
        const score = Math.max(-1, ...r.modelFilter.map((p) => rank(p, model)));
        if (score >= 0 && (!best || score > best.rank)) best = { rank: score, id: r.id };
      }
      return { model, recipe: best?.id ?? null };
    }),
    problems: recipes.flatMap((r) =>
      r.modelFilter
        .filter((p) => /\s/.test(p) || p === "")
        .map((pattern) => ({
          recipe: r.id,
          pattern,
          message: `"${pattern}" contains a space (' '); model ids have none`,
          said: said("pattern.space", { pattern, char: "' '" }),
        })),
    ),
  };
}

type FakeStage = import("../bindings").PipelineStage;
type FakeDescriptor = import("../bindings").ProcessorDescriptor;
type FakeConfig = import("../bindings").ProcessorConfig;

/** Three processors, one of them core; the model profile sets the token limiter's history share
 * and, for Claude models, switches alternation on. Merged like the engine: defaults, then the
 * model profile's config, then the preset's, which replaces the model's whole. */
const FAKE_PROCESSORS: FakeDescriptor[] = [
  {
    id: "session-loader",
    name: "Session loader",
    description: "Turns the session's messages into the pipeline's.",
    priority: 100,
    isCore: true,
    defaultEnabled: true,
    configFields: [],
  },
  {
    id: "token-limiter",
    name: "Token limiter",
    description: "Fits the context into the model's window.",
    priority: 400,
    isCore: false,
    defaultEnabled: true,
    configFields: [
      { key: "strategy", label: "Strategy", type: "select", default: "fixed-preset", options: ["fixed-preset", "proportional"] },
      { key: "shareHistory", label: "Share: history", type: "number", default: 55 },
      { key: "truncateOverflowing", label: "Cut the oldest kept message", type: "boolean", default: false },
    ],
  },
  {
    id: "ensure-alternation",
    name: "Ensure alternation",
    description: "Alternates user and assistant turns.",
    priority: 800,
    isCore: false,
    defaultEnabled: false,
    configFields: [{ key: "userPlaceholder", label: "User placeholder", type: "text", default: "[Start a new chat]" }],
  },
];

/** Under SillyTavern compatibility, alternation starts switched on with SillyTavern's opener. */
const FAKE_COMPAT: Record<string, import("../bindings").CompatDefaults> = {
  "ensure-alternation": {
    enabled: true,
    settings: { userPlaceholder: "[Start a new Chat]" },
    changes: said("plain", { text: "alternates turns as SillyTavern does" }),
  },
};

function fakeModelConfigs(model: string): FakeConfig[] {
  const configs: FakeConfig[] = [{ id: "token-limiter", settings: { shareHistory: 60 } }];
  if (model.startsWith("claude")) configs.push({ id: "ensure-alternation", enabled: true });
  return configs;
}

function fakePipeline(preset: AgentPreset, model: string): FakeStage[] {
  const modelConfigs = fakeModelConfigs(model);
  return FAKE_PROCESSORS.map((d): FakeStage => {
    const modelConfig = modelConfigs.find((c) => c.id === d.id) ?? null;
    const own = (preset.processors ?? []).find((c) => c.id === d.id);
    const chosen = own ?? modelConfig;
    const compat = FAKE_COMPAT[d.id] ?? null;
    const underCompat = preset.compatibility === "sillytavern" && compat !== null;
    let origin: import("../bindings").SettingOrigin = own ? "preset" : modelConfig ? "model" : "default";
    const values: Record<string, import("../bindings").Value> = {};
    const origins: Record<string, import("../bindings").SettingOrigin> = {};
    for (const f of d.configFields) {
      values[f.key] = f.default;
      origins[f.key] = "default";
    }
    const notes: string[] = [];
    const notesSaid: Said[] = [];
    let enabled = d.defaultEnabled;
    if (underCompat) {
      for (const [key, value] of Object.entries(compat.settings)) {
        values[key] = value;
        origins[key] = "compatibility";
      }
      if (compat.enabled !== undefined && compat.enabled !== null) {
        enabled = compat.enabled;
        if (!chosen || (chosen.enabled == null && chosen.priority == null)) origin = "compatibility";
      }
    }
    if (chosen?.enabled === false && d.isCore) {
      notes.push("a core processor cannot be disabled; it stays on");
      notesSaid.push(said("settings.core-stays-on"));
    } else if (chosen?.enabled !== undefined && chosen.enabled !== null) enabled = chosen.enabled;
    for (const [key, value] of Object.entries(chosen?.settings ?? {})) {
      if (!d.configFields.some((f) => f.key === key)) {
        notes.push(`unknown setting "${key}" ignored`);
        notesSaid.push(said("settings.unknown", { key }));
        continue;
      }
      values[key] = value;
      origins[key] = origin;
    }
    return {
      descriptor: d,
      sillytavern: compat,
      resolved: {
        id: d.id,
        enabled,
        priority: chosen?.priority ?? d.priority,
        origin,
        values,
        origins,
        notes,
        notesSaid,
      },
      modelConfig,
    };
  }).sort((a, b) => a.resolved.priority - b.resolved.priority);
}

/** The Claude models' profile sets generation settings of its own; the GPT one none. */
export function fakeModelGeneration(claude: boolean): import("../bindings").GenerationSettings | null {
  return claude
    ? { maxOutputTokens: 1024, topK: 40, cacheBreakpoints: { system: true }, extra: { metadata: { user_id: "fake" } } }
    : null;
}

/** The generation settings, resolved field by field (and `extra` key by key) as the engine does:
 * the model profile's, then the preset's; absent when none is set. */
function fakeGeneration(preset: AgentPreset, claude: boolean): import("../bindings").ResolvedGeneration | undefined {
  const resolved: import("../bindings").ResolvedGeneration = { settings: {}, origins: {}, extraOrigins: {} };
  const layers = [
    [fakeModelGeneration(claude), "model"],
    [preset.generation, "preset"],
  ] as const;
  for (const [layer, origin] of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) continue;
      if (key === "extra") {
        for (const [k, v] of Object.entries(value as Record<string, import("../bindings").Value>)) {
          resolved.settings.extra = { ...resolved.settings.extra, [k]: v };
          resolved.extraOrigins[k] = origin;
        }
        continue;
      }
      (resolved.settings as Record<string, unknown>)[key] = value;
      resolved.origins[key] = origin;
    }
  }
  const empty = Object.keys(resolved.origins).length === 0 && Object.keys(resolved.extraOrigins).length === 0;
  return empty ? undefined : resolved;
}

/** The OpenAI format takes no top K and no cache breakpoints: a set one is left out of the body
 * with a warning. */
function fakeGenerationWarnings(preset: AgentPreset, claude: boolean) {
  const settings = fakeGeneration(preset, claude)?.settings;
  if (claude || !settings) return [];
  return (["topK", "cacheBreakpoints"] as const)
    .filter((setting) => settings[setting] !== undefined && settings[setting] !== null)
    .map((setting) => ({
      processor: "generation",
      level: "warning",
      message: `generation setting ${setting} is not taken by the openai format; it is left out of the request`,
      said: said("generation.not-taken", { setting, format: "openai" }),
    }));
}

/** What the engine says, as it comes over the wire. */
function said(code: string, params: Record<string, string> = {}): Said {
  return { code, params, parts: {} };
}

/** Two built-in instruct templates, as the engine sends them (every field written). */
export const FAKE_INSTRUCT_TEMPLATES: InstructTemplate[] = [
  {
    formatVersion: 1,
    id: "chatml",
    name: "ChatML",
    bos: "",
    system: { prefix: "<|im_start|>system\n", suffix: "<|im_end|>\n" },
    user: { prefix: "<|im_start|>user\n", suffix: "<|im_end|>\n" },
    assistant: { prefix: "<|im_start|>assistant\n", suffix: "<|im_end|>\n" },
    systemMode: "own",
    systemSeparator: "",
    replyPrefix: "<|im_start|>assistant\n",
    stop: ["<|im_end|>"],
    names: "always",
    trim: false,
    specialTokens: ["<|im_start|>", "<|im_end|>"],
  },
  {
    formatVersion: 1,
    id: "alpaca",
    name: "Alpaca",
    bos: "",
    system: { prefix: "", suffix: "\n\n" },
    user: { prefix: "### Instruction:\n", suffix: "\n\n" },
    assistant: { prefix: "### Response:\n", suffix: "\n\n" },
    systemMode: "own",
    systemSeparator: "",
    replyPrefix: "### Response:\n",
    stop: ["\n### Instruction:"],
    names: "always",
    trim: false,
    specialTokens: [],
  },
];

/** The messages in `template`'s affixes, each role its own turn: the engine's render in small,
 * with the spans in UTF-8 bytes as the engine gives them. */
function fakeRender(template: InstructTemplate, messages: { role: string; content: string }[]): RenderedPrompt {
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  let prompt = "";
  const spans: RenderedPrompt["spans"] = [];
  const push = (text: string, source: RenderedPrompt["spans"][number]["source"]) => {
    if (!text) return;
    const start = bytes(prompt);
    prompt += text;
    spans.push({ start, end: bytes(prompt), source });
  };
  messages.forEach((m, index) => {
    const affixes = m.role === "system" ? template.system : m.role === "assistant" ? template.assistant : template.user;
    push(affixes?.prefix ?? "", { kind: "template" });
    push(m.content, { kind: "message", index });
    push(affixes?.suffix ?? "", { kind: "template" });
  });
  push(template.replyPrefix ?? "", { kind: "template" });
  return { template: template.id, prompt, spans, stop: template.stop ?? [], specialTokens: template.specialTokens ?? [] };
}
