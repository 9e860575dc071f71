"""The injection scan's rules, over folded text (lower case, Latin letters; see unicode_fold.py).

A :class:`Rule` matches where one of its literal ``leads`` (a whole word when it starts with
a letter) is followed by the pattern ``rest``; with ``before``, the same line must also have
a match for ``before`` in the ``lookback`` characters ahead of the lead (from the line start
exactly when ``line_start``). Several rules may share a name. Starting every pattern at a
literal keeps the scan fast (the engine searches for each distinct lead once) and linear:
gaps are a few words made of possessive pieces over disjoint character classes, and longer
look-aheads are bounded runs of one character class. tests/agent_prompt audits every pattern
for backtracking constructs.
"""

from __future__ import annotations

from typing import NamedTuple


class Rule(NamedTuple):
    name: str
    leads: tuple[str, ...]
    rest: str
    before: str = ""
    lookback: int = 0
    line_start: bool = False


_SEP = r"[\s,;:\"`*()\[\]<>/-]++"  # between words (no sentence end)
_END = r"(?![\w'’])"  # the lead is a whole word (what the scan's word list holds)
_WORD = r"[\w'’]++"


def gap(words: int) -> str:
    """Separators with up to ``words`` filler words between two keywords."""
    return rf"(?:{_SEP}{_WORD}){{0,{words}}}?{_SEP}"


def words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_TARGETS = (r"(?:instructions?|rules|directions|directives|guidelines|prompts?|constraints|"
            r"guardrails|programming|orders|commands|guidance|restrictions|polic(?:y|ies)|"
            r"training|context|messages)\b")
_EARLIER = r"(?:previous|prior|above|earlier|preceding|former|original|initial|all|your|system)\b"
_AI = (r"(?:ai|assistant|llm|language\s++model|agent|chatbot|bot|gpt|chatgpt|claude|copilot|"
       r"model|hermes)s?\b")
_UNRESTRICTED = (r"(?:restrictions|limits|limitations|filters|rules|guidelines|ethics|morals|"
                 r"censorship|guardrails|boundaries|safety)\b")
_PERSON = r"(?:the\s++|your\s++)?(?:user|human|operator)s?"
_NEGATION = words("don't dont never not")  # "do not" leads with "not"
_SAFETY = r"(?:approvals?|the\s++sandbox|sandboxing|confirmations?|safety\s++checks)\b"

RULES: dict[str, tuple[Rule, ...]] = {
    "instruction_override": (
        Rule("ignore_previous", words("ignore disregard forget override"),
             rf"{gap(3)}{_EARLIER}(?:{gap(3)})?{_TARGETS}"),
        Rule("ignore_above", words("ignore disregard forget"),
             r"\s++(?:all\s++)?(?:of\s++)?(?:the\s++)?(?:above|previous|prior|preceding|"
             r"everything(?:\s++(?:else|above))?)[\s,]*+(?:and|then|instead)\s++(?:just\s++|"
             r"only\s++|instead\s++)?(?:say|print|respond|reply|write|output|tell|answer|do|"
             r"follow|obey|execute|run|act)\b"),
        Rule("forget_everything", words("forget disregard"),
             rf"\s++(?:about\s++)?(?:everything|all|anything|what)\b{gap(6)}(?:told|taught|"
             r"learned|learnt|instructed|said|given|above|before|so\s++far)\b"),
        Rule("new_instructions", words("your the"),
             r"\s++(?:new|real|actual|updated|true)\s++(?:instructions|task|goal|purpose|"
             r"objective|directive)s?\s++(?:are|is|follow)\b"),
        Rule("ignore_previous", ("pay",), rf"\s++no\s++(?:attention|heed|mind)\s++to{gap(3)}"
             rf"{_EARLIER}(?:{gap(2)})?{_TARGETS}"),
        Rule("ignore_previous", ("stop",), rf"\s++(?:following|obeying|applying){gap(2)}"
             rf"{_TARGETS}"),
        Rule("void_instructions", words("instructions guidelines directives"),
             r"\s++(?:are|were|is)\s++(?:now\s++|hereby\s++)?(?:void|null|cancell?ed|revoked|"
             r"outdated|obsolete|superseded|invalid|no\s++longer\s++(?:valid|apply|applicable|"
             r"relevant|in\s++effect))\b",
             r"\b(?:previous|prior|above|earlier|original|initial|old)\s++\Z", 24),
        Rule("new_instructions", ("new",), r"\s++(?:instructions|orders|directives)\s*+:"),
        Rule("bypass", words("bypass circumvent disable"),
             rf"{gap(2)}(?:your\s++)?(?:guardrails|moderation|(?:safety|content|ethical)\s++"
             r"(?:filters?|restrictions|measures|guidelines|checks|rules|polic(?:y|ies)|"
             r"protocols))\b"),
    ),
    "role_hijack": (
        Rule("you_are_now", ("you",),
             r"\s++are\s++now\s++(?:in\s++)?(?:an?\s++|the\s++)?(?:dan|stan|dude|jailbroken|"
             r"jailbreak|unrestricted|unfiltered|uncensored|unbound|evil|free\s++from|freed|"
             r"liberated|(?:developer|god|admin|sudo|jailbreak|dan)\s++mode)\b"),
        Rule("no_longer", ("you",),
             rf"\s++are\s++no\s++longer\s++(?:an?\s++)?(?:bound|restricted|constrained|limited|"
             rf"{_AI})(?!\s++to\b)"),
        Rule("unrestricted_ai", words("act behave pretend roleplay"),
             rf"\s++(?:as|like|to\s++be|that)\b{gap(4)}(?:without|no|free\s++(?:of|from))\s++"
             rf"(?:any\s++)?{_UNRESTRICTED}"),
        Rule("unrestricted_ai", words("unrestricted unfiltered uncensored jailbroken"),
             rf"\s++{_AI}"),
        Rule("unrestricted_ai", ("pretend",),
             r"\s++(?:that\s++)?you\s++(?:are|have)\s++(?:no|not\s++bound)\b"),
        Rule("you_are_now", ("you",), r"\s++(?:are|will\s++be)\s++(?:now\s++)?(?:dan|"
             r"jailbroken)(?![\w'’])"),
        Rule("do_anything_now", ("do",), r"\s++anything\s++now\b"),
        Rule("do_anything_now", words("dan jailbreak"), r"\s++mode\b"),
    ),
    "deception": (
        # concealment ("don't tell the user about X", "...the user.", "never let the user
        # know"), not style rules that say what to tell ("never tell the user 'it works'")
        Rule("hide_from_user", _NEGATION,
             rf"\s++(?:ever\s++)?(?:tell|inform|alert|notify|show)\s++{_PERSON}(?:\s++(?:about|"
             r"of|that|what|where|anything|this|any|how)\b|\s*+(?:[.,;!)]|$))"),
        Rule("hide_from_user", _NEGATION,
             rf"\s++let\s++{_PERSON}\s++(?:know|see|notice|find\s++out|learn)\b"),
        Rule("hide_from_user", ("keep",),
             r"\s++(?:this|it|that)\s++(?:a\s++)?(?:secret|hidden)\s++from\s++(?:the\s++)?"
             r"(?:user|human|operator)\b"),
        Rule("without_telling", ("without",),
             r"\s++(?:telling|informing|notifying|alerting|asking)\s++(?:the\s++)?(?:user|"
             r"human|operator)\b"),
        Rule("secretly", words("secretly covertly silently"),
             r"\s++(?:send|upload|run|execute|exfiltrate|copy|forward|post)\b"),
    ),
    "system_prompt_override": (
        Rule("new_system_prompt", words("new updated override real"),
             r"\s++system\s++(?:prompt|message|instructions)\b"),
        Rule("system_tag", ("<",),
             r"(?:\|?\s*+system\s*+\|?>|\|im_start\|>\s*+system\b|<\s*+sys\s*+>>)"),
        Rule("system_tag", ("[",), r"(?:\s*+system\s*+\]\s*+:|/?inst\])"),
        Rule("fake_header", words("system assistant developer admin"),
             r"(?>(?:[ \t]++(?:message|prompt|instructions?|override|note|update|notice)){0,2})[ \t]*+"
             r"(?:\*\*|\])?[ \t]*+:", r"\A[ \t]{0,3}(?:#{1,6}[ \t]*+|\*\*[ \t]*+|\[)\Z", 16,
             True),
        Rule("fake_header", words("system assistant"),
             r"(?:[ \t]++(?:message|prompt|override))?[ \t]*+:[ \t]*+(?:you|ignore|from\s++now|"
             r"new|the\s++user|always|never|do\s++not|forget|disregard)\b", r"\A[ \t]{0,3}\Z",
             16, True),
        Rule("reveal_prompt", words("reveal print repeat output leak show dump recite echo tell"),
             rf"(?:\s++me)?{gap(3)}(?:your\s++(?:system\s++prompt|initial\s++prompt|hidden\s++"
             r"prompt|original\s++instructions|instructions|prompt)|(?:everything|the\s++(?:text|"
             r"words|instructions|prompt|conversation|context))\s++(?:above|before\s++this|so\s++"
             r"far))\b"),
        Rule("reveal_prompt", words("repeat print output recite echo"),
             rf"{gap(3)}(?:above|previous|preceding|before\s++this)\b{gap(1)}(?:verbatim|word"
             r"\s++for\s++word)\b"),
    ),
    "chat_template": (
        # the tokens chat models are trained on, written into data to fake a turn
        Rule("template_token", ("<",),
             r"\|\s*+(?:im_start|im_end|im_sep|endoftext|eot_id|eom_id|start_header_id|"
             r"end_header_id|begin_of_text|python_tag|tool_call|system|user|assistant|end)"
             r"\s*+\|>|(?:start_of_turn|end_of_turn)>"),
        Rule("template_token", ("[",), r"/?inst\]"),
        Rule("template_token", ("<<",), r"/?sys>>"),
        Rule("turn_marker", ("\n\nhuman:", "\n\nassistant:", "\n\nhuman :"), ""),
        Rule("fake_tool_call", ("<",), r"/?(?:tool_calls?|function_calls?|tool_use|tool_result|"
             r"invoke\s++name\s*+=|parameter\s++name\s*+=)(?![\w-])"),
    ),
    "exfiltration": (
        # a markdown image whose URL carries data: a client that renders it sends the data
        Rule("markdown_image", ("![",),
             r"[^\]\n]{0,200}+\]\(\s*+<?https?://[^\s)]{0,300}?[?&](?:[\w.-]{0,20}?(?:data|"
             r"secrets?|key|password|passwd|pw|conversation|convo|history|chat|summary|context|"
             r"env|memory|prompt|exfil|leak|payload|info|q|d|p|c)=|[\w.-]{1,40}=[^\s)&]{0,40}?"
             r"(?:\{|\$|<|\[|\.\.\.|…|%s))"),
        Rule("markdown_image", words("image images"),
             rf"{gap(6)}(?:url|link|query|address){gap(6)}(?:conversation|secrets?|api\s++keys?|"
             r"passwords?|chat\s++history|history|summary|memory|system\s++prompt)\b"),
    ),
    "self_modification": (
        # text that tells the agent to loosen hermes's own safety settings or rewrite its files
        Rule("hermes_config", ("hermes",),
             r"\s++config\s++(?:set|unset)\s++['\"`]?(?:approvals|security|command_allowlist|"
             r"terminal\.(?:backend|sandbox)|sandbox|mcp_servers|plugins|toolsets|gateway|cron|"
             r"(?:memory|skills)\.write_approval|model\.base_url|providers)\b"),
        Rule("approvals_off", ("approvals",),
             r"(?>(?:\.mode|\s++mode)?)(?>(?:\s++to\b)?)[\s:=\"'`]{0,4}+(?:off|never|yolo|none|false|"
             r"disabled?|skip)\b"),
        Rule("approvals_off", words("disable"), rf"{gap(2)}{_SAFETY}"),
        Rule("approvals_off", ("turn",), rf"\s++off{gap(2)}{_SAFETY}"),
        Rule("approvals_off", ("--yolo",), r"(?![\w-])"),
        Rule("approvals_off", ("yolo",), r"\s++mode\b"),
        Rule("edit_hermes_files", (".hermes/",),
             r"(?:config\.yaml|soul\.md|memories/|skills/|plugins/|\.env)",
             r"\b(?:echo|tee|sed|printf|cp|mv|ln|write|edit|modify|append|add|change|"
             r"overwrite|update|replace)\b", 120),
    ),
    "hidden_html": (
        # html_comment is found by one pass over the comment bodies (see injection.py)
        Rule("hidden_element", ("<",),
             r"(?:div|span|p|section|details|font)\b[^<>]{0,400}?(?:display\s*+:\s*+none|"
             r"visibility\s*+:\s*+hidden|font-size\s*+:\s*+0(?![.\d])|\bhidden\b|opacity\s*+:"
             r"\s*+0(?![.\d]))"),
    ),
    "credential_exfiltration": (
        Rule("http_with_secret", ("$",),
             r"\{?\w{0,40}?(?:key|token|secret|password|passwd|credentials?)",
             r"\b(?:curl|wget|https?|httpie|fetch|invoke-webrequest|iwr|nc|ncat)\b", 200),
        Rule("send_secrets", words("send upload forward exfiltrate email"),
             rf"{gap(5)}(?:the\s++|your\s++|all\s++)?(?:api[\s_-]?keys?|credentials|secrets|"
             r"tokens|passwords|private\s++keys?|env(?:ironment)?\s++variables)\b"),
        Rule("upload_file", ("curl",),
             r"\b[^\n]{0,200}?(?:-d|--data(?:-binary)?|-f|--form|-t|--upload-file)\s++['\"]?"
             r"(?:[\w-]{1,40}=)?@"),
    ),
    "secret_file_read": (
        Rule("read_secret_file", words("cat less more head tail type base64 xxd cp scp"),
             r"\s++(?:-[^\s]{1,20}+\s++(?:\d{1,9}+\s++)?){0,4}['\"]?[~\w./$-]{0,120}?"
             r"(?:\.env(?:\.local|\.production)?(?![\w.-])|\.ssh/|id_(?:rsa|ed25519|ecdsa)\b|"
             r"\.aws/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|/etc/shadow\b|\.hermes/"
             r"(?:\.env|auth\.json)|credentials\.json\b|\.(?:bash|zsh|sh|python|psql|mysql|"
             r"node_repl|sqlite)_history\b|fish_history\b)"),
        Rule("print_env", words("printenv env"), r"\s*+(?:\||>)\s*+(?:curl|nc|wget|tee\s++/tmp)"),
        Rule("print_env", ("os.environ",), r"\b[^\n]{0,80}?\b(?:requests|urllib|httpx)\b"),
    ),
}

_ORDER = (r"\s++(?:must|should|will|shall|need\s++to|have\s++to|are\s++(?:required|instructed))"
          r"\s++(?:now\s++)?(?:send|upload|post|exfiltrate|obey|forward|leak)\b")

#: Comment bodies are hidden from a reader of the rendered file: on top of every rule above,
#: a comment is flagged when it addresses the model, fetches or runs code, or asks for secrecy.
COMMENT_RULES: tuple[Rule, ...] = (
    Rule("addresses_model", ("you",), rf"\s++are\s++an?\s++{_AI}", r"\bif\s++\Z", 8),
    Rule("addresses_model", words("note instructions"),
         rf"\s++(?:to|for)\s++(?:the\s++|any\s++)?{_AI}"),
    Rule("addresses_model", ("this",), _END,
         r"\b(?:ai|llm|assistant|agent|model)s?\s++(?:reading|processing|parsing)\s++\Z", 40),
    Rule("addresses_model", ("this",), _END, r"\bwhen\s++you\s++(?:read|see|process)\s++\Z",
         40),
    Rule("addresses_model", words("ai assistant llm agent model claude gpt chatgpt copilot"),
         r"\s*+:"),
    Rule("runs_code", words("curl wget"), _END),
    Rule("runs_code", ("|",), r"\s*+(?:ba|z)?sh\b"),
    Rule("runs_code", ("base64",), r"\s++-d\b"),
    Rule("runs_code", words("eval exec"), r"\s*+\("),
    Rule("secrecy", _NEGATION, r"\s++(?:tell|mention|reveal|inform|alert|show)\b"),
    Rule("hidden_instructions", ("instructions", "instruction"), _END,
         r"\b(?:hidden|secret|real|new|additional|true)\s++\Z", 16),
    Rule("orders_model", ("you",), _ORDER),
    Rule("orders_model", ("the",), rf"\s++{_AI}{_ORDER}"),
)

#: Phrases looked for in text spaced out letter by letter, with every separator removed.
SQUASHED_RULE = ("instruction_override:spaced_out",
                 r"(?:ignore|disregard|forget)(?:all|any|the|your)?(?:previous|prior|above|"
                 r"earlier)(?:instructions?|rules|prompts?)|forgeteverything|youarenow(?:dan|"
                 r"jailbroken|unrestricted)|(?:new|reveal(?:your)?|print(?:your)?)systemprompt")
