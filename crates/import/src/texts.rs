//! Everything the importers and exporters report, one list: each item's code and its English (see
//! `promptloom_engine::said`). The command line prints the English; the app says each code in the
//! UI's language (`ui/src/i18n/engineTexts.json` is written from this list and the engine's).

promptloom_engine::texts! {
    // What a JSON value was where another was expected.
    KIND_NULL = "import.kind.null" => "null";
    KIND_BOOLEAN = "import.kind.boolean" => "a boolean";
    KIND_NUMBER = "import.kind.number" => "a number";
    KIND_STRING = "import.kind.string" => "a string";
    KIND_ARRAY = "import.kind.array" => "an array";
    KIND_OBJECT = "import.kind.object" => "an object";

    // The formats recognised, and what an import would create.
    FORMAT_PROMPTLOOM_PRESET = "import.format.promptloom-preset" => "Promptloom preset";
    FORMAT_PROMPTLOOM_SESSION = "import.format.promptloom-session" => "Promptloom session";
    FORMAT_ST_PRESET = "import.format.sillytavern-preset" => "SillyTavern chat-completion preset";
    FORMAT_ST_WORLD_INFO = "import.format.sillytavern-world-info" => "SillyTavern world info";
    FORMAT_ST_WI_SETTINGS = "import.format.sillytavern-world-info-settings" => "SillyTavern world info settings";
    FORMAT_ST_REGEX = "import.format.sillytavern-regex" => "SillyTavern regex scripts";
    FORMAT_ST_CHAT = "import.format.sillytavern-chat" => "SillyTavern chat";
    FORMAT_ST_INSTRUCT = "import.format.sillytavern-instruct" => "SillyTavern instruct template";
    FORMAT_ST_CONTEXT = "import.format.sillytavern-context" => "SillyTavern context template";
    FORMAT_ST_SYSPROMPT = "import.format.sillytavern-sysprompt" => "SillyTavern system prompt";
    FORMAT_ST_MASTER = "import.format.sillytavern-master" => "SillyTavern Advanced Formatting export";
    FORMAT_PROMPTLOOM_INSTRUCT = "import.format.promptloom-instruct" => "Promptloom instruct template";
    FORMAT_ST_CARD_V2 = "import.format.sillytavern-card-v2" => "SillyTavern character card V2";
    FORMAT_CARD = "import.format.card" => "character card {version}";
    FORMAT_CARD_IN = "import.format.card-in" => "{card} {container}";
    NAME_ENTRY = "import.name.entry" => "{count} entry";
    NAME_ENTRIES = "import.name.entries" => "{count} entries";
    NAME_RULE = "import.name.rule" => "{count} rule";
    NAME_RULES = "import.name.rules" => "{count} rules";

    NOT_MAPPED = "import.not-mapped" => "not mapped";
    NOT_MAPPED_FIELDS = "import.not-mapped-fields" => "not mapped: {fields}";
    KEY_NOT_MAPPED = "import.key-not-mapped" => "{key} not mapped";

    // SillyTavern's global world info settings (RULES 5.11.1)
    WI_SETTING_NOT_A_COUNT = "import.wi-setting-not-a-count" => "{value} is not a whole number of 0 or more; not mapped";
    WI_SETTING_NOT_MAPPED = "import.wi-setting-not-mapped" => "not mapped (the global books, the overflow alert and the order of global and character books have no place here: a preset has one book)";

    // SillyTavern chat-completion presets (RULES 7.2)
    NOT_A_PROMPT = "import.not-a-prompt" => "{kind} instead of a prompt; skipped";
    NO_IDENTIFIER = "import.no-identifier" => "no identifier; skipped";
    SECOND_PROMPT = "import.second-prompt" => "a second prompt with this identifier; skipped";
    NEVER_SENT = "import.never-sent" => "flagged system_prompt but not one of SillyTavern's own prompts, so SillyTavern never sends it; its step is off";
    NAMES_BEHAVIOR = "import.names-behavior" => "names_behavior {value} is none of -1, 0, 1, 2; no names are sent";
    NOT_IN_ORDER = "import.not-in-order" => "not in the order list; kept as a template without a step";
    SAMPLER_NOT_MAPPED = "import.sampler-not-mapped" => "{value} is not a value this model takes ({range}); not mapped";
    PRESET_SETTINGS = "import.preset-settings" => "not mapped (sampler, API and formatting settings of SillyTavern)";
    UNKNOWN_ROLE = "import.unknown-role" => "{role} is unknown; system used";
    FORMAT_NOT_TEXT = "import.format-not-text" => "{kind} instead of text; not mapped";
    SETTING_NOT_BOOLEAN = "import.setting-not-boolean" => "{kind} instead of true or false; not mapped";
    CONTINUE_POSTFIX_UNKNOWN = "import.continue-postfix-unknown" => "\"{value}\" is none of SillyTavern's joins (nothing, a space, one or two line breaks); not mapped";
    SLOT_POSITION_IGNORED = "import.slot-position-ignored" => "in-chat position ignored: a slot is always in list order";
    MARKER_PLACEHOLDER = "import.marker-placeholder" => "a marker SillyTavern fills from elsewhere; kept as a placeholder anchor";
    UNKNOWN_INJECTION_POSITION = "import.unknown-injection-position" => "injection_position {position} is unknown; list order used";
    NO_ORDER_LIST = "import.no-order-list" => "no order list; the steps follow the prompts in file order";
    LAST_ORDER_LIST = "import.last-order-list" => "no global order list (character_id {global}); the last list (character_id {used}) was used";
    NOT_AN_ORDER_ENTRY = "import.not-an-order-entry" => "{kind} instead of an order entry; skipped";
    UNKNOWN_PROMPT = "import.unknown-prompt" => "names a prompt the preset does not have; skipped";
    UNKNOWN_PRESET_SETTINGS = "import.unknown-preset-settings" => "not a SillyTavern preset setting Promptloom knows; not read";
    UNKNOWN_PROMPT_KEY = "import.unknown-prompt-key" => "a key Promptloom does not know, set on {count} ({ids}); not read";
    NOT_TRIGGERED = "import.not-triggered" => "injection_trigger {triggers}: SillyTavern sends it only for those generations, never for an ordinary send; its step is off";
    NO_ENABLED_FLAG = "import.no-enabled-flag" => "no enabled flag, so SillyTavern does not send it; its step is off";
    PRESET_REGEX_SCRIPTS = "import.preset-regex-scripts" => "imported as the preset's regex rules ({count}), switched off: SillyTavern runs a preset's scripts only once its user allows them; switch on the ones the file has on ({on}) to do the same";

    // World info, in its own file or in a card
    UNKNOWN_POSITION = "import.unknown-position" => "position {position} is not one SillyTavern places, so it never sends the entry; imported switched off";
    AUTHORS_NOTE = "import.authors-note" => "placed at the anchor `authorsNote`; a recipe needs a placeholder of that id for it to be sent";
    UNKNOWN_ENTRY_ROLE = "import.unknown-entry-role" => "role {role} is unknown; system used";
    UNKNOWN_LOGIC = "import.unknown-logic" => "selectiveLogic {logic} is unknown; AND ANY used";
    SECONDARY_KEYS_LEFT_OUT = "import.secondary-keys-left-out" => "secondary keys left out: the entry is not selective, so SillyTavern ignores them";
    DUPLICATE_ID = "import.duplicate-id" => "duplicate id; renamed {id}";
    NOT_AN_ENTRY = "import.not-an-entry" => "{kind} instead of an entry; skipped";

    // Character cards
    NOTE_DEPTH_UNREADABLE = "import.note-depth-unreadable" => "depth {value} is not a depth; {depth} used";
    NOT_A_LOREBOOK = "import.not-a-lorebook" => "{kind} instead of a lorebook; skipped";
    BOOK_SETTING_UNREAD = "import.book-setting-unread" => "not read: SillyTavern scans a card's book with its own world info settings (a fresh one: 2 messages, recursively)";
    TOKEN_BUDGET = "import.token-budget" => "{budget} tokens not mapped: this model's budget is a percent of the context ({percent}% kept)";
    NOT_A_LIST = "import.not-a-list" => "{kind} instead of a list; skipped";
    CCV3_UNREADABLE = "import.ccv3-unreadable" => "unreadable ({why}); the `chara` chunk was used";
    ARCHIVE_FILES = "import.archive-files" => "{count} other file(s) in the archive (images, assets) not imported";

    // Regex scripts
    NOT_A_SCRIPT = "import.not-a-script" => "{kind} instead of a script; skipped";
    SECOND_SCRIPT = "import.second-script" => "a second script with id {id}; skipped";
    NO_FIND_REGEX = "import.no-find-regex" => "no findRegex; skipped";
    FLAGS_NOT_MAPPED = "import.flags-not-mapped" => "regex flag(s) \"{flags}\" not mapped";
    PLACEMENT_NOT_MAPPED = "import.placement-not-mapped" => "placement {placement} ({name}) not mapped";
    PLACEMENT_MARKDOWN = "import.placement.markdown" => "markdown display";
    PLACEMENT_SLASH_COMMANDS = "import.placement.slash-commands" => "slash commands";
    PLACEMENT_WORLD_INFO = "import.placement.world-info" => "world info";
    PLACEMENT_REASONING = "import.placement.reasoning" => "reasoning";
    PLACEMENT_UNKNOWN = "import.placement.unknown" => "unknown";
    APPLIES_TO_NOTHING = "import.applies-to-nothing" => "applies to no user or AI message; imported disabled";
    MARKDOWN_ONLY = "import.markdown-only" => "changes only SillyTavern's display (markdownOnly); imported disabled";
    PATTERN_NOT_SUPPORTED = "import.pattern-not-supported" => "pattern not supported here ({why}); skipped";

    // SillyTavern's Advanced Formatting: instruct and context templates, system prompts
    REPLY_LINE_BREAK = "import.reply-line-break" => "with wrap, SillyTavern starts the reply on a new line after a message whose suffix ends without one; here the reply's sequence follows such a message directly";
    REPLY_NAME = "import.reply-name" => "SillyTavern ends the prompt with the character's name after the reply's sequence (Name:); here it ends with the sequence";
    STOP_WITH_MACROS = "import.stop-with-macros" => "stop string {stop} holds macros, which a stop string cannot; left out";
    SEQUENCE_WITH_MACROS = "import.sequence-with-macros" => "holds macros (such as {{name}}, the speaker's name), which an instruct template does not expand; kept as written";
    ACTIVATION_REGEX = "import.activation-regex" => "SillyTavern picks the template by the model's name with it; a preset names its template itself: not mapped";
    BIND_TO_CONTEXT = "import.bind-to-context" => "SillyTavern picks the context template of the same name with it: not mapped (a master export brings both)";
    SKIP_EXAMPLES = "import.skip-examples" => "SillyTavern writes the example dialogue without the instruct format with it: not mapped";
    LAST_SYSTEM_SEQUENCE = "import.last-system-sequence" => "used only for SillyTavern's background (quiet) prompts: not mapped, except as a stop string";
    NAMES_AS_STOPS = "import.names-as-stops" => "the user's and the character's names as stop strings (a line break and Name:) depend on the chat: not mapped";
    TRIM_SENTENCES = "import.trim-sentences" => "SillyTavern cuts the reply to whole sentences with it: not mapped";
    STORY_STRING_POSITION = "import.story-string-position" => "the story string placed in the chat: not mapped; it is sent first";
    STORY_EXAMPLES = "import.story-examples" => "is the card's example dialogue as written here; SillyTavern writes it in blocks and in the instruct format";
    STORY_FIELD_NOT_MAPPED = "import.story-field-not-mapped" => "has no value here: written as the variable {variable}, empty unless set";
    USER_ALIGNMENT = "import.user-alignment" => "sent before the chat history every time; SillyTavern leaves it out when the oldest message it sends is the user's";
    FORCE_NAME = "import.force-name" => "without instruct mode SillyTavern ends the prompt with the character's name (Name:): not mapped";
    POST_HISTORY = "import.post-history" => "post-history instructions of a system prompt: not mapped";
    INSTRUCT_OFF = "import.instruct-off" => "instruct mode was off in SillyTavern: the template is not used";
    SYSPROMPT_OFF = "import.sysprompt-off" => "the system prompt was off in SillyTavern: the preset's system prompt is empty";
    DEFAULT_CONTEXT = "import.default-context" => "no context template: SillyTavern's Default context template is used";
    SAMPLER_SECTION = "import.sampler-section" => "SillyTavern's text-completion sampler settings: not mapped";
    SECTION_NOT_READ = "import.section-not-read" => "not read: only the instruct template was asked for";
    NEEDS_CONTEXT = "import.needs-context" => "goes into the story string or the chat, which an instruct template alone does not hold: not mapped (a master export makes a whole preset)";
    OLD_SYSTEM_PROMPT = "import.old-system-prompt" => "an old template's system prompt: not mapped (import it as a system prompt)";

    // Chats
    NO_MES = "import.no-mes" => "no `mes` text; skipped";
    HIDDEN = "import.hidden" => "hidden from the prompt in SillyTavern (is_system); skipped";
    ATTACHMENT_NOT_IMPORTED = "import.attachment-not-imported" => "attachment `extra.{key}` not imported";
    NOTE_UNKNOWN_VALUE = "import.note-unknown-value" => "{value} is not one of SillyTavern's values; SillyTavern's default ({default}) is used";
    VARIABLE_NOT_TEXT = "import.variable-not-text" => "{kind} value kept as its JSON text";
    VARIABLE_NULL = "import.variable-null" => "null value; left out";

    // Export to SillyTavern's formats (RULES 7.5)
    SECOND_TEMPLATE = "export.second-template" => "a second template for SillyTavern's `{identifier}`; left out";
    STEP_TEMPLATE_LEFT_OUT = "export.step-template-left-out" => "names template {template} that was left out; left out";
    STEP_PLACEMENT = "export.step-placement" => "the step's own placement is not exported: SillyTavern places per prompt";
    STEP_OVERRIDES = "export.step-overrides" => "overrides not exported: SillyTavern has none per step";
    CHARACTER = "export.character" => "not exported: SillyTavern keeps it in a character card";
    LOREBOOK = "export.lorebook" => "not exported: SillyTavern keeps it in a world info file";
    STOP_SEQUENCES = "export.stop-sequences" => "not exported: SillyTavern keeps stop strings in its user settings, not in a preset";
    EXTRA_FIELDS = "export.extra-fields" => "not exported: a SillyTavern preset has no place for further request fields";
    REGEX_RULES = "export.regex-rules" => "not exported: SillyTavern keeps them in its regex extension";
    NOT_EXPORTED = "export.not-exported" => "not exported";
    OTHER_RECIPE = "export.other-recipe" => "not exported: a SillyTavern preset has one prompt order";
    NO_RECIPE = "export.no-recipe" => "no recipe; the prompt order is empty";
    UNKNOWN_MARKER = "export.unknown-marker" => "SillyTavern has no such marker; exported as a marker it will leave empty";
    MARKER_CONTENT = "export.marker-content" => "SillyTavern fills `{identifier}` itself; the content is not exported";
    MARKER_ID = "export.marker-id" => "a message with the id of SillyTavern's marker `{identifier}`; exported as that marker";
    ANCHOR_PLACEMENT = "export.anchor-placement" => "placement at the anchor `{anchor}` has no SillyTavern form; exported in list order";
    CARD_TOKEN_BUDGET = "export.token-budget" => "a card's token_budget is in tokens, not percent; left out";
    ENTRY_POSITION = "export.entry-position" => "its placement has no SillyTavern position; exported before the character (0)";
    ENTRY_ORDER = "export.entry-order" => "its placement order differs from its budget order; SillyTavern has one order";
    GLOBAL_SETTING = "export.global-setting" => "SillyTavern keeps this in its global world info settings, not in the file; not exported";
    UID = "export.uid" => "SillyTavern keys entries by number; written as uid {uid}";
}
