#!/usr/bin/env python3
"""Writes the cases of tests/st-live/cases/ (presets, cards, chats, world files written for these
tests): python3 tests/st-live/make_cases.py tests/st-live/cases. Captures are made afterwards
(README.md); a case whose inputs change needs a new capture."""
import json, os, sys
OUT = sys.argv[1]

def prompt(identifier, name, content="", role="system", system_prompt=False, marker=False, depth=None, order=100, forbid=False):
    p = {"identifier": identifier, "name": name, "system_prompt": system_prompt, "role": role, "content": content, "marker": marker}
    if marker:
        p = {"identifier": identifier, "name": name, "system_prompt": True, "marker": True}
    if depth is not None:
        p["injection_position"] = 1; p["injection_depth"] = depth; p["injection_order"] = order
    elif not marker:
        p["injection_position"] = 0; p["injection_depth"] = 4
    if forbid: p["forbid_overrides"] = True
    return p

MARKERS = [
    prompt("worldInfoBefore", "World Info (before)", marker=True),
    prompt("personaDescription", "Persona Description", marker=True),
    prompt("charDescription", "Char Description", marker=True),
    prompt("charPersonality", "Char Personality", marker=True),
    prompt("scenario", "Scenario", marker=True),
    prompt("worldInfoAfter", "World Info (after)", marker=True),
    prompt("dialogueExamples", "Chat Examples", marker=True),
    prompt("chatHistory", "Chat History", marker=True),
]

def preset(prompts, order, **settings):
    base = {
        "chat_completion_source": "openai", "openai_model": "gpt-4o",
        "temperature": 1, "frequency_penalty": 0, "presence_penalty": 0, "top_p": 1, "top_k": 0,
        "openai_max_context": 128000, "openai_max_tokens": 400,
        "wrap_in_quotes": False, "names_behavior": 0, "send_if_empty": "",
        "impersonation_prompt": "[Write your next reply from the point of view of {{user}}.]",
        "new_chat_prompt": "[Start a new Chat]", "new_group_chat_prompt": "[Start a new group chat.]",
        "new_example_chat_prompt": "[Example Chat]",
        "continue_nudge_prompt": "[Continue the following message: {{lastChatMessage}}]",
        "bias_preset_selected": "Default (none)", "max_context_unlocked": True,
        "wi_format": "{0}", "scenario_format": "[Circumstances and context of the dialogue: {{scenario}}]",
        "personality_format": "[{{char}}'s personality: {{personality}}]",
        "group_nudge_prompt": "[Write the next reply only as {{char}}.]",
        "stream_openai": False, "squash_system_messages": False, "image_inlining": False,
        "continue_prefill": False, "continue_postfix": " ", "seed": -1, "n": 1,
    }
    base.update(settings)
    base["prompts"] = prompts
    base["prompt_order"] = [{"character_id": 100001, "order": [{"identifier": i, "enabled": e} for i, e in order]}]
    return base

def card(name, description, personality, scenario, first_mes, mes_example="", depth_prompt=None, book=None, system_prompt="", post_history=""):
    data = {"name": name, "description": description, "personality": personality, "scenario": scenario,
            "first_mes": first_mes, "mes_example": mes_example, "creator_notes": "Written for Promptloom's tests.",
            "system_prompt": system_prompt, "post_history_instructions": post_history,
            "alternate_greetings": [], "tags": ["test"], "creator": "Promptloom tests", "character_version": "1",
            "extensions": {"talkativeness": "0.5", "fav": False, "world": ""}}
    if depth_prompt:
        data["extensions"]["depth_prompt"] = depth_prompt
    if book:
        data["character_book"] = book
        data["extensions"]["world"] = book["name"]
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}

def book_entry(uid, keys, content, position, constant=False, order=100, depth=4, role=0, comment=""):
    # V2 character_book entry; SillyTavern reads its own settings from extensions.
    pos_name = {0: "before_char", 1: "after_char"}.get(position, "before_char")
    return {"id": uid, "keys": keys, "secondary_keys": [], "comment": comment or f"entry {uid}", "content": content,
            "constant": constant, "selective": True, "insertion_order": order, "enabled": True,
            "position": pos_name,
            "extensions": {"position": position, "exclude_recursion": False, "display_index": uid,
                           "probability": 100, "useProbability": True, "depth": depth, "selectiveLogic": 0,
                           "group": "", "group_override": False, "group_weight": 100, "prevent_recursion": False,
                           "delay_until_recursion": False, "scan_depth": None, "match_whole_words": None,
                           "use_group_scoring": False, "case_sensitive": None, "automation_id": "", "role": role,
                           "vectorized": False, "sticky": 0, "cooldown": 0, "delay": 0}}

def chat(user, char, messages, metadata=None):
    lines = [json.dumps({"user_name": user, "character_name": char, "create_date": "2024-01-01@00h00m00s",
                         "chat_metadata": metadata or {}})]
    for who, text in messages:
        lines.append(json.dumps({"name": user if who == "u" else char, "is_user": who == "u", "is_system": False,
                                 "send_date": "2024-01-01@00h00m00s", "mes": text}))
    return "\n".join(lines) + "\n"

def write(case, preset_v, card_v, chat_v, persona, text_input, world=None, kind=None):
    d = os.path.join(OUT, case)
    os.makedirs(d, exist_ok=True)
    json.dump(preset_v, open(os.path.join(d, "preset.json"), "w"), indent=2, ensure_ascii=False)
    json.dump(card_v, open(os.path.join(d, "card.json"), "w"), indent=2, ensure_ascii=False)
    open(os.path.join(d, "chat.jsonl"), "w").write(chat_v)
    spec = {"preset": "preset.json", "card": "card.json", "chat": "chat.jsonl", "persona": persona, "input": text_input}
    if world:
        json.dump(world, open(os.path.join(d, "world.json"), "w"), indent=2, ensure_ascii=False)
        spec["world"] = "world.json"
    if kind:
        # continue or impersonate: SillyTavern's menu item with the message box empty
        spec["type"] = kind
    json.dump(spec, open(os.path.join(d, "case.json"), "w"), indent=2, ensure_ascii=False)
    open(os.path.join(d, "SOURCES"), "w").write(
        "Every file here was written for Promptloom's tests (MIT, like the rest of the repository);\n"
        "st_capture.json is what SillyTavern 1.12.6 sent for them (tests/st-live/README.md).\n")

# ---------- case 10: squash + names in content + comments/trim + custom system_prompt + depth prompts
lantern_book = {"name": "Harbor lore", "description": "", "scan_depth": 4, "token_budget": 2048, "recursive_scanning": False,
    "extensions": {}, "entries": [
        book_entry(0, ["harbor"], "The harbor of Vell freezes every winter.\r\nShips wait in the ice.", 0, constant=True, order=50),
        book_entry(1, ["lantern", "lamp"], "{{char}}'s lantern burns whale oil.", 1, order=80),
        book_entry(2, ["fog"], "[Fog rolls in from the east.]", 4, order=100, depth=1, role=0),
    ]}
p10 = preset([
    prompt("main", "Main Prompt", "{{// The main prompt: who speaks.}}\nYou are {{char}}. Speak with {{user}} in a slow, careful voice.\n{{trim}}", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "Stay in {{char}}'s voice; one paragraph.", system_prompt=True),
    prompt("enhanceDefinitions", "Enhance Definitions", "If you know {{char}}, use what you know.", system_prompt=True),
    prompt("style", "Style", "Write in the present tense.\nKeep dialogue in quotes."),
    prompt("hidden_rule", "Hidden rule", "This custom prompt is flagged as a system prompt.", system_prompt=True),
    prompt("depth_user", "Depth user", "[{{user}} glances at the door.]", role="user", depth=2, order=100),
    prompt("depth_sys", "Depth system", " Reminder: {{notChar}} is listening. ", depth=0, order=100),
], [("main", True), ("style", True), ("hidden_rule", True), ("worldInfoBefore", True), ("personaDescription", True),
    ("charDescription", True), ("charPersonality", True), ("scenario", True), ("enhanceDefinitions", False), ("nsfw", True),
    ("worldInfoAfter", True), ("dialogueExamples", True), ("chatHistory", True), ("depth_user", True), ("depth_sys", True),
    ("jailbreak", True)], squash_system_messages=True, names_behavior=2)
c10 = card("Ilse", "Ilse keeps the harbor light of Vell.\r\nShe is sixty, patient and exact.\r\n",
    "patient, exact, dry", "  A winter night at the harbor light.  ",
    "*Ilse sets down the kettle.* \"You came in with the fog.\"",
    "<START>\r\n{{user}}: Is the light always on?\r\n{{char}}: \"Every night since the wreck.\"\r\n<START>\r\n{{user}}: Do you sleep?\r\n{{char}}: \"In the mornings.\"",
    depth_prompt={"prompt": " Ilse is worried about the oil running low. ", "depth": 1, "role": "system"}, book=lantern_book)
ch10 = chat("Tomas", "Ilse", [("c", "*Ilse sets down the kettle.* \"You came in with the fog.\""),
    ("u", "The fog is thick tonight."), ("c", "\"It always is, this late in the year.\""),
    ("u", "Where does the oil come from?"), ("c", "*She taps the lantern.* \"From the whalers, when they come.\"")])
write("10_squash_content_names", p10, c10, ch10, {"name": "Tomas", "description": "{{user}} is a young clerk sent from the capital."},
      "Can I help you carry the oil up the stairs?")

# ---------- case 11: names in the name field, group macros, variables
p11 = preset([
    prompt("main", "Main Prompt", "Write {{char}}'s next reply in a chat between {{charIfNotGroup}} and {{notChar}}. Group: {{group}}; speaking: {{groupNotMuted}}.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "{{setvar::place::the old mill}}{{setglobalvar::tone::dry}}Setting: {{getvar::place}}. Tone: {{getglobalvar::tone}}.", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "[Reply as {{char}} only.]", system_prompt=True),
    prompt("rules", "Rules", "{{// comment line}}\n{{trim}}\nNo summaries.{{newline}}No lists.", role="user"),
], [("main", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("nsfw", True), ("rules", True), ("worldInfoAfter", True),
    ("dialogueExamples", True), ("chatHistory", True), ("jailbreak", True)], names_behavior=1)
c11 = card("Mo the Miller", "{{char}} runs the mill by the river.", "gruff, kind", "Harvest week.",
    "\"Flour's not free,\" says Mo.", "")
ch11 = chat("Wren Ashby", "Mo the Miller", [("c", "\"Flour's not free,\" says Mo."), ("u", "I can pay in eggs."),
    ("c", "\"Eggs, she says.\" *He laughs.*"), ("u", "Fresh ones!")])
write("11_completion_names_group_macros", p11, c11, ch11, {"name": "Wren Ashby", "description": ""}, "Do we have a deal?")

# ---------- case 12: squash with example messages, a standalone world file, an author's note
world12 = {"entries": {
    "0": {"uid": 0, "key": ["mill"], "keysecondary": [], "comment": "the mill", "content": "The mill has three stones.", "constant": False,
          "selective": True, "order": 100, "position": 0, "disable": False, "excludeRecursion": False, "probability": 100,
          "useProbability": True, "depth": 4, "selectiveLogic": 0, "group": "", "role": None, "sticky": 0, "cooldown": 0, "delay": 0},
    "1": {"uid": 1, "key": ["river"], "keysecondary": [], "comment": "the river", "content": "The river floods in spring.", "constant": False,
          "selective": True, "order": 90, "position": 1, "disable": False, "excludeRecursion": False, "probability": 100,
          "useProbability": True, "depth": 4, "selectiveLogic": 0, "group": "", "role": None, "sticky": 0, "cooldown": 0, "delay": 0},
    "2": {"uid": 2, "key": ["eggs"], "keysecondary": [], "comment": "eggs", "content": "[Eggs are scarce this year.]", "constant": False,
          "selective": True, "order": 100, "position": 4, "disable": False, "excludeRecursion": False, "probability": 100,
          "useProbability": True, "depth": 2, "selectiveLogic": 0, "group": "", "role": 0, "sticky": 0, "cooldown": 0, "delay": 0},
    "3": {"uid": 3, "key": [], "keysecondary": [], "comment": "always", "content": "Harvest is near.", "constant": True,
          "selective": True, "order": 100, "position": 0, "disable": False, "excludeRecursion": False, "probability": 100,
          "useProbability": True, "depth": 4, "selectiveLogic": 0, "group": "", "role": None, "sticky": 0, "cooldown": 0, "delay": 0},
}}
p12 = preset([
    prompt("main", "Main Prompt", "Write {{char}}'s next reply.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "Keep it short.", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "", system_prompt=True),
    prompt("late_note", "Late note", "[Weather: rain]", depth=1, order=100),
    prompt("late_note_2", "Late note 2", "[Time: dusk]", depth=1, order=100),
], [("main", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("nsfw", True), ("worldInfoAfter", True),
    ("dialogueExamples", True), ("chatHistory", True), ("late_note", True), ("late_note_2", True), ("jailbreak", True)],
    squash_system_messages=True)
c12 = card("Mo the Miller", "{{char}} runs the mill by the river.", "gruff, kind", "Harvest week.",
    "\"Flour's not free,\" says Mo.", "<START>\n{{user}}: How much for a sack?\n{{char}}: \"Two coins.\"\n<START>\n{{char}}: \"Mind the stones.\"")
ch12 = chat("Wren", "Mo the Miller", [("c", "\"Flour's not free,\" says Mo."), ("u", "I can pay in eggs."),
    ("c", "\"Eggs, she says.\" *He laughs.*"), ("u", "Fresh ones, from the river farm!")],
    metadata={"note_prompt": "[Mo is tired after a long day at the mill.]", "note_interval": 1, "note_position": 1,
              "note_depth": 2, "note_role": 0})
write("12_squash_examples_world_note", p12, c12, ch12, {"name": "Wren", "description": ""}, "Two sacks, then?", world=world12)

# ---------- case 13: a long preset shaped like the community ones
prompts13 = [prompt("main", "Main Prompt", "{{// @category Core }}\n{{// @tooltip The heart of the preset }}\nYou are {{char}} in a story with {{user}}.", system_prompt=True), *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "{{// @category Output }}\n[Continue the story.]", system_prompt=True)]
order13 = [("main", True)]
sections = ["Core", "Style", "Pacing", "Output"]
n = 0
for s in sections:
    hid = f"hdr_{s.lower()}"
    prompts13.append(prompt(hid, f"━━━ {s} ━━━", ""))
    order13.append((hid, True))
    for k in range(6):
        n += 1
        pid = f"{s.lower()}_{k}"
        text = f"{{{{// @category {s} }}}}\n{{{{// @tooltip rule {k} }}}}\n{s} rule {k}: keep {{{{char}}}} consistent ({n})."
        if k == 4:
            prompts13.append(prompt(pid, f"🎲 {s} {k}", text, depth=k % 3, order=100 + k))
        elif k == 5:
            prompts13.append(prompt(pid, f"✨ {s} {k}", text, role="user", depth=1, order=100))
        else:
            prompts13.append(prompt(pid, f"{s} {k}", text))
        order13.append((pid, k % 2 == 0 or k >= 4))
    prompts13.append(prompt(f"sys_{s.lower()}", f"{s} (system flag)", f"{s} hidden.", system_prompt=True))
    order13.append((f"sys_{s.lower()}", True))
order13 += [("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True), ("charPersonality", True),
            ("scenario", True), ("worldInfoAfter", True), ("dialogueExamples", True), ("chatHistory", True), ("jailbreak", True)]
p13 = preset(prompts13, order13, squash_system_messages=True)
write("13_long_preset_sections", p13, c11, ch11, {"name": "Wren Ashby", "description": "A traveller."}, "Do we have a deal?")

# ---------- case 14: names in the field with squash; carriage returns in the chat
p14 = preset([
    prompt("main", "Main Prompt", "Write {{char}}'s next reply.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "[Stay brief.]", system_prompt=True),
    prompt("inchat", "In chat", "[The lamp flickers.]", depth=1, order=100),
], [("main", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("nsfw", True), ("worldInfoAfter", True),
    ("dialogueExamples", True), ("chatHistory", True), ("inchat", True), ("jailbreak", True)],
    squash_system_messages=True, names_behavior=1)
ch14 = chat("Tomas", "Ilse", [("c", "*Ilse sets down the kettle.*\r\n\"You came in with the fog.\""),
    ("u", "Thank you.\r\nIt is cold."), ("c", "\"Sit by the stove.\"")])
write("14_completion_names_squash_crlf", p14, c10, ch14, {"name": "Tomas", "description": ""}, "What is that noise?")

# ---------- case 15: shaped like real community presets: a comment before {{trim}} at the start
# of a prompt (its line break stays), a read-me prompt of comments only, squash with an empty
# assistant prompt between system prompts (it keeps them apart) and an empty system one (it does
# not); a depth prompt and example dialogue written with CRLF
p15 = preset([
    prompt("readme", "Read-me", "{{// Read-me: switch on one of the main prompts below. }}{{trim}}"),
    prompt("main", "Main Prompt", "{{// The main prompt, keep it on. }}{{trim}}\nYou are {{char}}. Give it your all!", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "", system_prompt=True),
    prompt("rules", "Rules", "\n{{// Rules for the roleplay. }}{{trim}}\n<rules>\nStay in character.\n</rules>"),
    prompt("style", "Style", "\n{{// Style. }}{{trim}}\n<style>{{trim}}\nShort lines.\n</style>\n"),
    prompt("empty_turn", "Prefill (empty)", "", role="assistant"),
    prompt("empty_sys", "Spare (empty)", ""),
    prompt("after", "After", "Mind the weather."),
], [("readme", True), ("main", True), ("rules", True), ("empty_turn", True), ("style", True), ("empty_sys", True),
    ("after", True), ("worldInfoBefore", True),
    ("personaDescription", True), ("charDescription", True), ("charPersonality", True), ("scenario", True),
    ("nsfw", True), ("worldInfoAfter", True), ("dialogueExamples", True), ("chatHistory", True), ("jailbreak", True)],
    squash_system_messages=True)
c15 = card("Oskar", "Oskar mends nets on the pier.\r\nHe hums while he works.", "quiet, warm", "A grey morning on the pier.",
    "*Oskar looks up from the net.* \"Mind the hooks.\"",
    "<START>\r\n{{user}}: Need help?\r\n{{char}}: \"Hold this end.\"",
    depth_prompt={"prompt": "[\r\n{{char}} is tired today.\r\n]\r\n", "depth": 4, "role": "system"})
ch15 = chat("Tomas", "Oskar", [("c", "*Oskar looks up from the net.* \"Mind the hooks.\""),
    ("u", "Morning. Any fish?"), ("c", "\"Not yet.\"")])
write("15_trim_after_comment_crlf_note", p15, c15, ch15, {"name": "Tomas", "description": ""}, "Can I sit with you?")

# ---------- case 16: prompts whose text comes out as white space only (section headers of comments),
# sent as SillyTavern sends them; one in the chat is not
p16 = preset([
    prompt("main", "Main Prompt", "Write {{char}}'s next reply.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "[Stay brief.]", system_prompt=True),
    prompt("hdr_core", "━━━ Core ━━━", "{{// @category Core }}\n{{// @section-header true }}\n{{trim}}"),
    prompt("core_rule", "Core rule", "{{// @category Core }}\n{{// @tooltip one rule }}\n\nKeep {{char}} consistent."),
    prompt("hdr_style", "━━━ Style ━━━", "{{// @category Style }}\n"),
    prompt("hdr_depth", "━━━ In chat ━━━", "{{// @category In chat }}\n", depth=1, order=100),
], [("main", True), ("hdr_core", True), ("core_rule", True), ("hdr_style", True), ("worldInfoBefore", True),
    ("personaDescription", True), ("charDescription", True), ("charPersonality", True), ("scenario", True),
    ("nsfw", True), ("worldInfoAfter", True), ("dialogueExamples", True), ("chatHistory", True), ("hdr_depth", True),
    ("jailbreak", True)])
write("16_white_space_prompts", p16, c15, ch15, {"name": "Tomas", "description": ""}, "Can I sit with you?")

# ---------- case 17: shaped like real community files: a world info file written in the card
# book's shape (entries in a list, position "before_char", which SillyTavern places nowhere) beside
# entries at its numbered positions; an in-chat prompt reads a variable ({{getvar}}) that a later
# prompt sets, and the chat keeps the value an earlier generation left
world17 = {"name": "Vell", "entries": [
    {"id": 0, "uid": 0, "keys": ["harbor"], "key": ["harbor"], "keysecondary": [], "comment": "card-book shaped",
     "content": "The harbor of Vell freezes every winter.", "constant": False, "selective": False,
     "insertion_order": 100, "order": 100, "enabled": True, "disable": False, "position": "before_char",
     "extensions": {"position": 0, "depth": 4, "role": 0}},
    {"uid": 1, "key": ["lantern"], "keysecondary": [], "comment": "numbered", "content": "The lantern burns whale oil.",
     "constant": False, "selective": True, "order": 100, "position": 1, "disable": False, "depth": 4, "role": None},
    {"uid": 2, "key": [], "keysecondary": [], "comment": "always", "content": "Winter is near.",
     "constant": True, "selective": True, "order": 90, "position": 0, "disable": False, "depth": 4, "role": None},
]}
p17 = preset([
    prompt("main", "Main Prompt", "Write {{char}}'s next reply.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "", system_prompt=True),
    prompt("format", "Formatting", "{{// Reads the voice set below. }}{{trim}}\n### Formatting\n- {{getvar::voice}}\n- Short lines.", depth=1, order=100),
    prompt("voice", "Voice", "{{setvar::voice::Write for Oskar only, never for <user>.}}{{trim}}"),
], [("main", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("nsfw", True), ("worldInfoAfter", True),
    ("dialogueExamples", True), ("chatHistory", True), ("format", True), ("voice", True), ("jailbreak", True)])
ch17 = chat("Tomas", "Oskar", [("c", "*Oskar looks up from the net.* \"Mind the hooks.\""),
    ("u", "Is the harbor frozen yet?"), ("c", "\"Not yet. Light the lantern, will you?\"")],
    metadata={"variables": {"voice": "Write for Oskar only, never for Tomas."}})
write("17_card_book_world_file_getvar_before_setvar", p17, c15, ch17, {"name": "Tomas", "description": ""},
      "Where is the oil?", world=world17)

# ---------- cases 18 and 19: continue and impersonate with a preset shaped like the community ones
# (squashed system messages, the nudge rather than the reply sent last, their own impersonation and
# nudge texts with macros, post-history instructions, prompts in the chat at depths 0 and 1, the
# card's depth prompt)
p18 = preset([
    prompt("main", "Main Prompt", "You are {{char}}. Write only {{char}}'s part.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "[Keep it under three sentences.]", system_prompt=True),
    prompt("tone", "Tone", "Dry humour, no melodrama."),
    prompt("chat_sys", "In chat (system)", "[Remember the tide.]", depth=0, order=100),
    prompt("chat_user", "In chat (user)", "[{{user}} waits for an answer.]", role="user", depth=1, order=100),
], [("main", True), ("tone", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("nsfw", True), ("worldInfoAfter", True),
    ("dialogueExamples", True), ("chatHistory", True), ("chat_sys", True), ("chat_user", True), ("jailbreak", True)],
    squash_system_messages=True, continue_prefill=False, continue_postfix=" ",
    continue_nudge_prompt="[Go on with {{char}}'s last message, without repeating it: {{lastChatMessage}}]",
    impersonation_prompt="[Now write {{user}}'s next message to {{char}}, in {{user}}'s own words.]")
ch18 = chat("Tomas", "Oskar", [("c", "*Oskar looks up from the net.* \"Mind the hooks.\""),
    ("u", "Is the tide coming in?"), ("c", "*He squints at the water.* \"Soon. You should  ")])
write("18_continue_nudge_squash", p18, c15, ch18, {"name": "Tomas", "description": ""}, "", kind="continue")
write("19_impersonate_squash", p18, c15, ch18, {"name": "Tomas", "description": ""}, "", kind="impersonate")

# ---------- cases 20 and 21: continue and impersonate with the reply sent last (continue_prefill),
# names before the texts, an assistant prompt after the history and an in-chat prompt at depth 0
p20 = preset([
    prompt("main", "Main Prompt", "Write the next part of the story.", system_prompt=True),
    *MARKERS,
    prompt("nsfw", "Auxiliary Prompt", "", system_prompt=True),
    prompt("jailbreak", "Post-History Instructions", "", system_prompt=True),
    prompt("ack", "Acknowledgement", "Understood. Continuing the story.", role="assistant"),
    prompt("chat_note", "In chat", "[Night falls.]", depth=0, order=100),
], [("main", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("nsfw", True), ("worldInfoAfter", True),
    ("dialogueExamples", True), ("chatHistory", True), ("chat_note", True), ("jailbreak", True), ("ack", True)],
    names_behavior=2, continue_prefill=True, continue_postfix="\n",
    impersonation_prompt="[Write {{user}}'s reply.]")
write("20_continue_prefill_names", p20, c15, ch18, {"name": "Tomas", "description": "A fisherman's son."}, "", kind="continue")
write("21_impersonate_names", p20, c15, ch18, {"name": "Tomas", "description": "A fisherman's son."}, "", kind="impersonate")
