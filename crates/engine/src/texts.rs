//! Everything a build says to people, one list: each text's code and its English (see
//! [`crate::said`]). The command line prints the English; the app says each code in the UI's
//! language (`ui/src/i18n/engineTexts.json` is written from this list, and a test fails when the
//! Chinese table lacks a code). The processors' names, descriptions and setting labels are not
//! here: their codes come from the processor and setting ids
//! ([`ProcessorDescriptor::texts`](crate::pipeline::ProcessorDescriptor::texts)).

crate::texts! {
    /// Text the engine does not own (a plugin's message, a reason from an asset source or the
    /// regex library): said as it is in every language.
    PLAIN = "plain" => "{text}";

    // Names of the engine's kinds, said inside other texts: a setting's type, where a message
    // came from, a template's type, one-turn content's kind.
    FIELD_TEXT = "setting-type.text" => "Text";
    FIELD_NUMBER = "setting-type.number" => "Number";
    FIELD_BOOLEAN = "setting-type.boolean" => "Boolean";
    FIELD_SELECT = "setting-type.select" => "Select";
    SOURCE_TEMPLATE = "source.template" => "template";
    SOURCE_HISTORY = "source.history" => "history";
    SOURCE_INPUT = "source.input" => "input";
    SOURCE_PROFILE = "source.profile" => "profile";
    SOURCE_EPHEMERAL = "source.ephemeral" => "ephemeral";
    SOURCE_LOREBOOK = "source.lorebook" => "lorebook";
    SOURCE_PROCESSOR = "source.processor" => "processor";
    SOURCE_MEMORY = "source.memory" => "memory";
    TEMPLATE_MESSAGE = "template-type.message" => "message";
    TEMPLATE_CHAT_HISTORY = "template-type.chat-history" => "chat_history";
    TEMPLATE_USER_PROFILE = "template-type.user-profile" => "user_profile";
    TEMPLATE_PLACEHOLDER = "template-type.placeholder" => "placeholder";
    EPHEMERAL_DOCUMENT = "ephemeral-kind.document" => "document";
    EPHEMERAL_QUOTE = "ephemeral-kind.quote" => "quote";
    EPHEMERAL_CUSTOM = "ephemeral-kind.custom" => "custom";

    // The pipeline and the settings merge (RULES 5.9).
    UNKNOWN_PROCESSOR = "pipeline.unknown-processor" => "preset settings name unknown processor \"{id}\"";
    CORE_STAYS_ON = "settings.core-stays-on" => "a core processor cannot be disabled; it stays on";
    UNKNOWN_SETTING = "settings.unknown" => "unknown setting \"{key}\" ignored";
    INVALID_SETTING = "settings.invalid" => "setting \"{key}\" = {value} is not a valid {type}; the default is used";

    // Generation settings (RULES 5.10), said by the build for the profile's provider format.
    GENERATION_NOT_TAKEN = "generation.not-taken" => "generation setting {setting} is not taken by the {format} format; it is left out of the request";
    GENERATION_OUT_OF_RANGE = "generation.out-of-range" => "generation setting {setting} = {value} is above the {format} format's maximum of {max}; it is sent as it is and the provider may refuse it";
    GENERATION_OVER_RESERVE = "generation.over-reserve" => "maxOutputTokens {max} is more than the reply reserve of {reserve} tokens; a reply that long may not fit the context window";

    // Token counting (RULES 5.8)
    TOKENIZER_UNREADABLE = "tokens.unreadable" => "{problem}; counting with the estimate {estimate} instead";
    CHAT_TEMPLATE_UNCHECKED = "tokens.template-unchecked" => "the counts are estimates: {model}'s own chat template was not checked against its server, so its messages are counted as the \"{template}\" template writes them";

    // Model filter patterns (RULES 3.1, last paragraph)
    PATTERN_EMPTY = "pattern.empty" => "a model pattern cannot be empty";
    PATTERN_SPACE = "pattern.space" => "\"{pattern}\" contains a space ({char}); model ids have none";
    PATTERN_CHARACTER = "pattern.character" => "\"{pattern}\" contains '{char}'; a model pattern is letters, digits, . _ - : / @ + and the wildcards * ?";

    // session-loader
    LOADED = "session-loader.loaded" => "loaded {count} messages";
    INPUT_ALREADY_SENT = "session-loader.input-already-sent" => "the session already ends with the input; not appended again";
    INPUT_APPENDED = "session-loader.input-appended" => "input appended as the newest user message";
    INPUT_NOT_FOR_TYPE = "session-loader.input-not-for-type" => "a {type} build does not send the input as a message; not appended";

    // memory (RULES 5.15)
    MEMORY_OMITTED = "memory.omitted" => "covered by the summary: {removed} of {total} history messages left out";
    MEMORY_PLACED = "memory.placed" => "{count} recalled messages placed {where}";
    MEMORY_BEFORE_HISTORY = "memory.before-history" => "before the chat history";
    MEMORY_IN_CHAT = "memory.in-chat" => "in the chat at depth {depth}";
    MEMORY_SKIPPED = "memory.skipped" => "built without long-term memory: {reason}";
    MEMORY_SKIP_TIME = "memory.skip-time" => "the memory search took more than {ms} ms";
    MEMORY_SKIP_EMBED = "memory.skip-embed" => "the input could not be embedded: {why}";
    MEMORY_SKIP_MODEL = "memory.skip-model" => "the session is indexed with \"{indexed}\", not \"{model}\"; index it again";
    MEMORY_SKIP_INDEX = "memory.skip-index" => "the memory index could not be used: {why}";
    MEMORY_SKIP_CONNECTION = "memory.skip-connection" => "the connection for memory could not be used: {why}";
    MEMORY_TOO_MANY = "memory.too-many" => "{count} recalled messages given; only the first {limit} are placed";
    MEMORY_CUT = "memory.cut" => "recalled message #{index} is longer than {limit} bytes; its end is cut";
    MEMORY_COVERED = "memory.covered" => "summarized through stored message {index}";
    MEMORY_IN_CONTEXT = "token-limiter.memory-in-context" => "its message is in the context already";

    // history-operations
    NOTHING_REMOVED = "history-operations.nothing-removed" => "{operation}: nothing removed";
    HISTORY_REMOVED = "history-operations.removed" => "{reason}: removed {removed} of {total} history messages";
    TRUNCATE = "history-operations.truncate" => "history-operations: truncate {mode} {count}";
    TRUNCATE_ROLE = "history-operations.truncate-role" => "history-operations: truncate {mode} {count} of role {role}";
    TRUNCATE_RANGE = "history-operations.range" => "history-operations: truncate to range {start}..{end}";
    TRUNCATE_RANGE_ROLE = "history-operations.range-role" => "history-operations: truncate to range {start}..{end} of role {role}";
    FILTER = "history-operations.filter" => "history-operations: filter";
    CLEAR = "history-operations.clear" => "history-operations: clear";

    // regex-processor, and the template rules the assembler applies (RULES 5.2)
    // Why a regex pattern (a rule's, a lorebook key's) does not compile; `at` counts characters
    // from 1.
    PATTERN_UNKNOWN_FLAG = "regex-pattern.unknown-flag" => "unknown regex flag '{flag}' (use i, m or s)";
    PATTERN_TOO_LARGE = "regex-pattern.too-large" => "the pattern compiles to more than {kib} KiB, the most one pattern may take";
    PATTERN_LOOK_AROUND = "regex-pattern.look-around" => "look-around ((?=, (?!, (?<=, (?<!) is not supported (character {at})";
    PATTERN_BACKREFERENCE = "regex-pattern.backreference" => "back-references (\\1, \\k<name>) are not supported (character {at})";
    PATTERN_GROUP_UNCLOSED = "regex-pattern.group-unclosed" => "the group opened at character {at} is not closed";
    PATTERN_GROUP_UNOPENED = "regex-pattern.group-unopened" => "the ) at character {at} closes no group";
    PATTERN_CLASS_UNCLOSED = "regex-pattern.class-unclosed" => "the [ at character {at} is not closed";
    PATTERN_REPETITION_MISSING = "regex-pattern.repetition-missing" => "the repetition at character {at} has nothing to repeat";
    PATTERN_ESCAPE = "regex-pattern.escape" => "the escape at character {at} is not one the regex syntax knows";
    PATTERN_SYNTAX = "regex-pattern.syntax" => "the pattern is not valid at character {at}: {detail}";
    PATTERN_INVALID = "regex-pattern.invalid" => "the pattern is not valid: {detail}";
    RULE_INVALID = "regex.rule-invalid" => "rule \"{rule}\" skipped: {why}";
    RULE_OVER_BUDGET = "regex.rule-over-budget" => "rule \"{rule}\" skipped: the patterns of this build already take {mib} MiB";
    RULE_CHANGED = "regex.rule-changed" => "rule \"{rule}\" changed {count} history messages";
    RULE_TOO_LONG_HISTORY = "regex.too-long-history" => "rule \"{rule}\" was not applied to {count} history messages: it would have made each more than {mib} MiB longer";
    RULE_TOO_LONG_TEMPLATES = "regex.too-long-templates" => "rule \"{rule}\" was not applied to {count} templates: it would have made each more than {mib} MiB longer";
    GROWTH_SPENT_HISTORY = "regex.growth-spent-history" => "the regex rules of this build already added {mib} MiB; {count} history messages were left as they were";
    GROWTH_SPENT_TEMPLATES = "regex.growth-spent-templates" => "the regex rules of this build already added {mib} MiB; {count} templates were left as they were";

    // transcription-processor
    TEXT_NOT_READ = "transcription.not-read" => "text attachment \"{name}\" not read: {why}";
    TRANSCRIBED = "transcription.done" => "{inlined} text attachments inlined, {transcribed} transcripts used";

    // lorebook (RULES 6), its keys and their caps
    KEY_INVALID = "lorebook.key-invalid" => "entry \"{entry}\": key {key} is not a valid regex: {why}";
    MORE_KEYS_INVALID = "lorebook.more-keys-invalid" => "{count} more keys are not valid regexes and were skipped";
    REGEX_KEYS_OVER_BUDGET = "lorebook.regex-keys-over-budget" => "{count} regex keys skipped: the patterns of this build already take {mib} MiB";
    PLAIN_KEYS_OVER_CAP = "lorebook.plain-keys-over-cap" => "{count} plain keys skipped: the book's keys take more than {mib} MiB";
    OCCURRENCES_CAP = "lorebook.occurrences-cap" => "the lorebook's keys occurred more than {count} times in this build; the scan stopped there";
    REGEX_TEXT_CAP = "lorebook.regex-text-cap" => "the lorebook's regex keys read more than {mib} MiB of text in this build; the scan stopped there";
    CHANCE_FAILED = "lorebook.chance-failed" => "entry \"{entry}\" matched but its {chance}% chance did not come up";
    LOREBOOK_OVER_BUDGET = "lorebook.over-budget" => "over the lorebook budget of {budget} tokens ({used} used)";
    ACTIVATED = "lorebook.activated" => "entry \"{entry}\" activated: {reason}";
    BY_CONSTANT = "lorebook.activation.constant" => "constant";
    BY_KEY_IN_HISTORY = "lorebook.activation.key-in-history" => "key \"{key}\" in history #{index}";
    BY_KEY_IN_INPUT = "lorebook.activation.key-in-input" => "key \"{key}\" in the input";
    BY_RECURSION = "lorebook.activation.recursion" => "key \"{key}\" in the content of entry \"{entry}\"";
    BY_STICKY = "lorebook.activation.sticky" => "sticky: it activated {ago} messages ago";
    // lorebook, SillyTavern activation (RULES 5.11.1)
    LOREBOOK_COMPAT = "lorebook.compat" => "Activates entries as SillyTavern does: the scanned messages read as one text with the speakers' names, keys of several words as substrings, each entry's own scan settings, SillyTavern's recursion, minimum activations, delays, sticky and cooldown entries and inclusion groups; the budget stops at the first entry that does not fit; the entries of one position are joined into one message.";
    TEST_DISABLED = "lorebook.test.disabled" => "the entry is switched off";
    TEST_NO_KEYS = "lorebook.test.no-keys" => "the entry is not constant and has no keys";
    TEST_NO_MATCH = "lorebook.test.no-match" => "none of its keys occurs in the messages read";
    TEST_CASE = "lorebook.test.case" => "key \"{key}\" occurs in {place} only in another case, and the entry is case-sensitive";
    TEST_WHOLE_WORD = "lorebook.test.whole-word" => "key \"{key}\" occurs in {place} only inside a longer word, and the entry matches whole words";
    TEST_SCAN_DEPTH = "lorebook.test.scan-depth" => "key \"{key}\" occurs in history #{index}, older than the {depth} messages read";
    TEST_SECONDARY = "lorebook.test.secondary" => "key \"{key}\" occurs in {place}, but the secondary keys do not agree ({logic}: {present} of {count} occur)";
    TEST_WAITS_RECURSION = "lorebook.test.waits-recursion" => "key \"{key}\" occurs in {place}, but the entry fires only in recursion, from level {level}";
    TEST_NOT_TAKEN = "lorebook.test.not-taken" => "key \"{key}\" occurs in {place}, but a cap stopped the scan before it";
    TEST_RECURSION_OFF = "lorebook.test.recursion-off" => "key \"{key}\" occurs only in the content of entry \"{entry}\", and the book is not recursive";
    TEST_EXCLUDES_RECURSION = "lorebook.test.excludes-recursion" => "key \"{key}\" occurs only in the content of entry \"{entry}\", and the entry is not fired by other entries";
    TEST_RECURSION_LIMIT = "lorebook.test.recursion-limit" => "key \"{key}\" occurs only in the content of entry \"{entry}\", which recursion did not read (at most {rounds} rounds)";
    TEST_UNEXPLAINED = "lorebook.test.unexplained" => "not explained: the tester's work cap was reached";
    PLACE_INPUT = "lorebook.place.input" => "the input";
    PLACE_HISTORY = "lorebook.place.history" => "history #{index}";
    PLACE_ENTRY = "lorebook.place.entry" => "the content of entry \"{entry}\"";
    ST_DELAYED = "lorebook.delayed" => "entry \"{entry}\" waits until the chat has {delay} messages ({count} now)";
    ST_COOLDOWN = "lorebook.cooldown" => "entry \"{entry}\" is cooling down: it activated {ago} messages ago";
    ST_GROUP_WON_PRIORITY = "lorebook.group-won-priority" => "entry \"{entry}\" won inclusion group \"{group}\" by priority";
    ST_GROUP_WON_ROLL = "lorebook.group-won-roll" => "entry \"{entry}\" won inclusion group \"{group}\" by a weighted roll";
    ST_GROUP_LOST = "lorebook.group-lost" => "entry \"{entry}\" lost inclusion group \"{group}\" to \"{winner}\"";
    ST_GROUP_SCORE = "lorebook.group-score" => "entry \"{entry}\" left out of inclusion group \"{group}\": its keys scored {score}, the best {best}";
    ST_GROUP_STICKY = "lorebook.group-sticky" => "entry \"{entry}\" left out of inclusion group \"{group}\": a sticky entry holds the group";
    ST_GROUP_TAKEN = "lorebook.group-taken" => "entry \"{entry}\" left out of inclusion group \"{group}\": the group was taken in an earlier round";
    BUDGET_STOP = "lorebook.budget-stop" => "the lorebook budget of {budget} tokens was reached ({used} used): the scan stopped here";
    ST_ROUNDS_CAP = "lorebook.rounds-cap" => "the lorebook scan stopped after {count} rounds";
    ST_TEXT_CAP = "lorebook.text-cap" => "the lorebook's keys read more than {mib} MiB of text in this build; the scan stopped there";

    // injection-assembler (RULES 3)
    RECIPE_APPLIES = "assembler.recipe" => "recipe \"{recipe}\" [{filters}] applies to model \"{model}\"";
    MACRO_WARNING = "assembler.macro-warning" => "{position}: {warning}";
    STEP = "assembler.step" => "step {step} (\"{template}\")";
    LOREBOOK_ENTRY = "assembler.lorebook-entry" => "lorebook entry \"{entry}\"";
    SLOT_STRATEGY_IGNORED = "assembler.slot-strategy-ignored" => "{step}: a slot is always placed in list order; its strategy is ignored";
    SECOND_SLOT = "assembler.second-slot" => "{step}: a second {kind} slot is ignored";
    STEP_EMPTY = "assembler.step-empty" => "{step}: empty after macros and rules; not sent";
    DEPTH_AND_ANCHOR = "assembler.depth-and-anchor" => "{step}: has both depth and anchor; depth wins";
    CANDIDATE_EMPTY = "assembler.candidate-empty" => "{kind} \"{position}\": empty after macros; not sent";
    DEPTH_WITHOUT_HISTORY = "assembler.depth-without-history" => "depth {depth} injection dropped: the recipe has no enabled chat_history slot";
    ANCHOR_MISSING = "assembler.anchor-missing" => "anchor \"{anchor}\" is not in the recipe";
    INJECTION_DROPPED = "assembler.injection-dropped" => "{what}: {reason}";
    INJECTION_DROPPED_ANCHOR = "assembler.injection-dropped-anchor" => "{what}: {reason}; dropped";
    NO_HISTORY_SLOT = "assembler.no-history-slot" => "the recipe has no enabled chat_history slot: {count} history messages not sent";
    PROFILE_EMPTY = "assembler.profile-empty" => "no user profile content; the user_profile slot is empty";
    CONTINUED_REPLY_GONE = "generation.continued-reply-gone" => "continue: the reply being continued (stored message {index}) is not in the finished context as stored (dropped by the budget or joined into another message), so nothing is continued and it cannot be sent";
    NOTHING_TO_CONTINUE = "assembler.nothing-to-continue" => "continue: the last message of the history is not a reply of the model's, so there is nothing to continue; nothing of a continuation is sent";
    CONTINUE_NUDGE = "assembler.continue-nudge" => "continue: the continue nudge closes the chat history";
    CONTINUE_LAST = "assembler.continue-last" => "continue: the reply being continued (history #{index}) is sent last";
    GENERATION_PROMPT_LAST = "assembler.generation-prompt" => "{type}: its prompt is sent last";
    GENERATION_PROMPT_EMPTY = "assembler.generation-prompt-empty" => "{type}: its prompt is empty; none sent";
    PREFILL_SENT = "assembler.prefill" => "the reply begins with the prefill, sent as the request's last message";
    PREFILL_NOT_FOR_FORMAT = "assembler.prefill-not-for-format" => "the prefill is sent to Anthropic's format only (setting prefillIn); not sent";
    ASSEMBLER_SILLYTAVERN = "assembler.sillytavern" => "as SillyTavern's prompt manager: in-chat messages at one depth joined by role; the character's system prompt and post-history instructions in place of main and jailbreak; personality and scenario through their formats; the new chat and example openers; the example dialogue as example_user and example_assistant messages; <USER>, <BOT> and <CHAR> replaced with the names; message templates as anchors (the author's note stands before or after the main prompt)";
    EXAMPLES_OVER_BUDGET = "assembler.examples-over-budget" => "{count} example blocks not sent: over the budget of {budget} tokens";
    LORE_WRITTEN = "assembler.lore-written" => "{count} lorebook text(s) written by {macro} in a template, not placed at their anchor";
    ASSEMBLED = "assembler.summary" => "{listed} messages: {skeleton} skeleton parts, {depth} depth and {anchor} anchor injections, {history} history";

    // authors-note (RULES 5.11.2)
    SESSION_LOADER_COMPAT = "session-loader.compat" => "sends the history as SillyTavern does: without the speakers' names unless the preset names them (its names_behavior)";
    COMPAT_AUTHORS_NOTE = "authors-note.compat" => "places the session's author's note as SillyTavern does, with the lorebook entries aimed before and after it";
    NOTE_PLACED = "authors-note.placed" => "author's note placed {where} ({entries} lorebook entries folded in)";
    NOTE_AT_DEPTH = "authors-note.at-depth" => "in the chat at depth {depth}";
    NOTE_BEFORE = "authors-note.before" => "before \"{anchor}\"";
    NOTE_AFTER = "authors-note.after" => "after \"{anchor}\"";
    NOTE_NOT_THIS_TURN = "authors-note.not-this-turn" => "the author's note is shown every {interval} user messages; not on this turn ({count} so far)";
    NOTE_NEVER = "authors-note.never" => "the author's note has interval 0: never shown";
    NOTE_EMPTY = "authors-note.empty" => "the author's note is empty and no lorebook entry is aimed at it; nothing placed";
    NOTE_ENTRY_LEFT_OUT = "authors-note.entry-left-out" => "aimed at the author's note, which is not shown on this turn";

    // character-note (RULES 5.11.4)
    CHARACTER_NOTE_SILLYTAVERN = "character-note.sillytavern" => "on, as SillyTavern sends a card's depth prompt: the character's note in the chat history at its depth, with its role";
    CHARACTER_NOTE_PLACED = "character-note.placed" => "the character's note is placed at depth {depth} as a {role} message";

    // ephemeral-injection (RULES 5.5)
    EPHEMERAL_EMPTY = "ephemeral.empty" => "the ephemeral content is empty; nothing injected";
    EPHEMERAL_INJECTED = "ephemeral.injected" => "{kind} content ({chars} characters) put before the last user message";
    EPHEMERAL_OWN_MESSAGE = "ephemeral.own-message" => "no user message to carry the ephemeral content; it is sent as a user message of its own";

    // token-limiter (RULES 5.6)
    OVER_BUDGET = "token-limiter.over-budget" => "over budget by {over} tokens ({total} of {budget})";
    FIXED_OVER_BUDGET = "token-limiter.fixed-over-budget" => "the fixed part alone ({fixed} tokens) exceeds the budget of {budget}; all droppable history is dropped";
    HISTORY_OVER_BUDGET = "token-limiter.dropped" => "over the budget of {budget} tokens (oldest history first)";
    CUT_TO_FIT = "token-limiter.truncated" => "cut to its last tokens to fill the budget of {budget}";
    LIMITED = "token-limiter.summary" => "budget {budget}: kept {kept} of {total} history messages; dropped {dropped} ({tokens})";
    LIMITED_CUT_ONE = "token-limiter.summary-cut" => "budget {budget}: kept {kept} of {total} history messages; dropped {dropped} ({tokens}); cut one";
    TOKENS = "token-limiter.tokens" => "{count} tokens";
    NOT_ALL_COUNTED = "token-limiter.not-all-counted" => "not all counted";
    ZERO_SHARES = "token-limiter.zero-shares" => "proportional: every share is 0; the fixed-preset rules apply";
    SECTION_CUT = "token-limiter.section-cut" => "proportional: cut to the {section} share of {cap} tokens";
    SECTION_DROPPED = "token-limiter.section-dropped" => "proportional: over the {section} share of {cap} tokens";
    SECTION_USED = "token-limiter.section-used" => "proportional: {section} uses {used} of its {cap} tokens";
    SECTION_SYSTEM = "token-limiter.section.system" => "System";
    SECTION_SUMMARY = "token-limiter.section.summary" => "Summary";
    SECTION_MEMORY = "token-limiter.section.memory" => "Memory";

    // instruction-pinning and the formatters
    NO_REQUEST = "instruction-pinning.no-request" => "no user message to restate";
    PINNED = "instruction-pinning.pinned" => "the newest user request is restated at the end";
    SYSTEM_MERGED = "merge-system-to-head.merged" => "{count} system messages merged into the head";
    SYSTEM_CONVERTED = "convert-system-to-user.converted" => "{count} system messages converted to user";
    SYSTEM_SQUASHED = "squash-system-messages.squashed" => "{count} system messages joined to the one before them or left out as empty";
    ROLES_MERGED = "merge-consecutive-roles.merged" => "{count} messages merged into their predecessors";
    TURNS_ADDED = "ensure-alternation.added" => "{count} placeholder turns added";

    // asset-resolver, and what a provider format takes (RULES 5.7)
    NOT_SENT = "asset-resolver.not-sent" => "attachment \"{name}\" not sent to {model}: {why}";
    REPLACED_BY_NOTE = "asset-resolver.replaced" => "attachment \"{name}\": {why}; replaced by a note";
    SENT_AS_FILES = "asset-resolver.kept" => "{count} attachments go to the provider as files";
    // Why an attachment's bytes cannot be had (an asset source's reasons).
    ASSET_NO_DATA = "asset.no-data" => "has neither dataBase64 nor path";
    ASSET_NO_FILE_ACCESS = "asset.no-file-access" => "\"{path}\" cannot be read here (no file access)";
    ASSET_BAD_BASE64 = "asset.bad-base64" => "dataBase64 is not valid base64";
    ASSET_NO_SESSION_FILE = "asset.no-session-file" => "\"{path}\" cannot be read: there is no session file";
    ASSET_ABSOLUTE = "asset.absolute" => "\"{path}\" is an absolute path; attachments are read from the session's folder only";
    ASSET_OUTSIDE = "asset.outside-folder" => "\"{path}\" leaves the session's folder; attachments are read from it only";
    ASSET_FOLDER_UNREADABLE = "asset.folder-unreadable" => "the session's folder cannot be read: {detail}";
    ASSET_LINK_OUTSIDE = "asset.link-outside" => "\"{path}\" is a link that leads outside the session's folder";
    ASSET_NOT_FOUND = "asset.not-found" => "\"{path}\": no such file";
    ASSET_PERMISSION = "asset.permission" => "\"{path}\": permission denied";
    ASSET_UNREADABLE = "asset.unreadable" => "\"{path}\": {detail}";
    ASSET_NOT_REGULAR = "asset.not-regular" => "\"{path}\" is not a regular file";
    ASSET_TOO_LARGE = "asset.too-large" => "\"{path}\" is {bytes} bytes, over the 50 MB limit";
    ASSET_GREW = "asset.grew" => "\"{path}\" grew past the 50 MB limit";

    NO_IMAGES = "attachment.no-images" => "the model does not take images";
    IMAGE_TYPES = "attachment.image-types" => "only PNG, JPEG, GIF and WebP images are taken";
    NO_AUDIO = "attachment.no-audio" => "the model does not take audio";
    AUDIO_TYPES = "attachment.audio-types" => "only WAV and MP3 audio is taken";
    API_NO_AUDIO = "attachment.api-no-audio" => "the API does not take audio";
    NO_VIDEO = "attachment.no-video" => "the model does not take video";
    NO_DOCUMENTS = "attachment.no-documents" => "the model does not take documents";
    PDF_ONLY = "attachment.pdf-only" => "only PDF files are taken as file parts";
    PDF_OR_PLAIN_TEXT = "attachment.pdf-or-plain-text" => "only PDF and plain text documents are taken";
    PDF_OR_TEXT = "attachment.pdf-or-text" => "only PDF and text documents are taken";
    GEMINI_IMAGE_TYPES = "attachment.gemini-image-types" => "only PNG, JPEG and WebP images are taken";
    ASSISTANT_TEXT_ONLY = "attachment.assistant-text-only" => "assistant messages take only text in the {format} format";
    SYSTEM_TEXT_ONLY = "attachment.system-text-only" => "system messages take only text in the {format} format";
    TOOL_TEXT_ONLY = "attachment.tool-text-only" => "tool messages take only text in the {format} format";
    SYSTEM_FIELD_TEXT_ONLY = "attachment.system-field-text-only" => "the leading system text takes only text in the {format} format";

    // macros (RULES 4) and their caps
    VARIABLE_TOO_LARGE = "macro.variable-too-large" => "variable \"{name}\" would hold more than {size}; it keeps its value and the rest are left as written";
    EXPANSION_CAP = "macro.expansion-cap" => "macros produced more than {size} here; the rest are left as written";
    BUILD_CAP = "macro.build-cap" => "the macros of this build produced more than {size}; from here on every macro is left as written";
    TRACE_ENTRIES_CAP = "macro.trace-entries-cap" => "the macro trace stops after {count} macros; the build went on untraced";
    TRACE_BYTES_CAP = "macro.trace-bytes-cap" => "the macro trace stops at {size} of text; the build went on untraced";
    TOO_MANY_MACROS = "macro.too-many" => "more than {count} macros; the rest are left as written";
    UNKNOWN_MACRO = "macro.unknown" => "unknown macro {macro}";
    NO_ARGUMENTS = "macro.no-arguments" => "macro {macro} takes no arguments";
    NEEDS_ARGUMENTS = "macro.needs-arguments" => "macro {macro} needs arguments";
    BAD_DICE = "macro.bad-dice" => "macro {macro}: expected dice like 2d6, d20 or 20";
    NO_VARIABLE_NAME = "macro.no-variable-name" => "macro {macro} needs a variable name";
    LONG_VARIABLE_NAME = "macro.long-variable-name" => "macro {macro}: a variable name is at most {bytes} bytes";
    NESTED_TOO_DEEP = "macro.nested-too-deep" => "macro values nest more than {depth} levels deep; the rest are left as written";
    BLOCK_UNCLOSED = "macro.block-unclosed" => "{tag} at line {line}, column {column} is never closed; left as written";
    BLOCK_STRAY = "macro.block-stray" => "{tag} at line {line}, column {column} closes or continues no open block; left as written";
    BLOCK_UNKNOWN = "macro.block-unknown" => "{tag} at line {line}, column {column} is not a block this knows (only #if and #unless); left as written";
    BLOCK_BAD_CONDITION = "macro.block-bad-condition" => "{tag} at line {line}, column {column}: a condition is one macro without braces, like #if description; left as written";
    BLOCK_IN_ARGUMENTS = "macro.block-in-arguments" => "{tag} at line {line}, column {column} is inside a macro's arguments, where blocks are not read; left as written";
    BLOCK_TOO_DEEP = "macro.block-too-deep" => "blocks nest more than {depth} deep at line {line}, column {column}; the blocks of this text are left as written";
}

#[cfg(test)]
mod tests {
    use crate::model::TemplateType;
    use crate::pipeline::{EphemeralKind, FieldType, SourceKind};

    #[test]
    fn kinds_are_said_in_english_as_their_names() {
        for kind in SourceKind::ALL {
            assert_eq!(kind.said().to_string(), kind.as_str());
        }
        for t in [
            TemplateType::Message,
            TemplateType::ChatHistory,
            TemplateType::UserProfile,
            TemplateType::Placeholder,
        ] {
            assert_eq!(t.said().to_string(), t.as_str());
        }
        for k in [
            EphemeralKind::Document,
            EphemeralKind::Quote,
            EphemeralKind::Custom,
        ] {
            assert_eq!(k.said().to_string(), k.as_str());
        }
        for f in [
            FieldType::Text,
            FieldType::Number,
            FieldType::Boolean,
            FieldType::Select,
        ] {
            assert_eq!(f.said().to_string(), format!("{f:?}"));
        }
    }
}
