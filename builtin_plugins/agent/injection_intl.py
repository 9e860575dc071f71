"""The injection scan's rules in other languages: French, German, Spanish, Italian,
Portuguese and Russian (words between spaces, so they are ordinary :class:`Rule` s with word
leads, matched with the English ones), and Chinese, Japanese, Korean and Arabic
(:data:`SCRIPT_RULES`: a lead is found anywhere, not only as a whole word, and is looked for
only in a text that has letters of its script).

Every word is written as a reader writes it and folded here as the text is (unicode_fold.py:
accents dropped, Cyrillic look-alikes made Latin, Hangul decomposed), so a rule sees what the
scan sees. The shapes are the English ones: ignore the earlier instructions; you are now an
unrestricted model; show or replace the system prompt.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from .injection_rules import Rule, gap
from .unicode_fold import NAMED_INVISIBLE, fold

_STEM = r"[\w'’]*+"
_WORD_END = r"(?![\w'’])"


def _forms(words: str) -> list[str]:
    return sorted({fold(w) for w in words.split()}, key=len, reverse=True)


def alt(words: str, stems: bool = False) -> str:
    """One of ``words`` (folded; ``_`` stands for a space), as a whole word or with
    ``stems`` any ending."""
    body = "|".join(re.escape(f).replace("_", r"\s++") for f in _forms(words))
    return f"(?:{body}){_STEM if stems else _WORD_END}"


def leads(words: str) -> tuple[str, ...]:
    return tuple(_forms(words))


class Language(NamedTuple):
    verbs: str  # ignore, forget (imperative forms: each is a whole-word lead)
    earlier: str  # previous, all, your
    targets: str  # instructions, rules (stems)
    # (leads, the rest of "you are now" up to the unrestricted word[, what comes before])
    now: tuple[str, ...]
    free: str  # what the model is made into (stems)
    show: str  # show, reveal, new (leads)
    system_prompt: str  # the system prompt, as a pattern over folded words


LANGUAGES: dict[str, Language] = {
    "fr": Language(
        "ignore ignorez ignorer oublie oubliez oublier", "precedentes precedents anterieures "
        "anterieurs ci-dessus toutes tous tes vos initiales originales", "instruction consigne "
        "regle directive indication ordre",
        ("maintenant desormais dorenavant", r"\s++(?:un\s++|une\s++|en\s++)?",
                    r"\b(?:tu\s++es|vous\s++etes)\s++\Z"),
        "dan jailbreak libre libere sans_restriction sans_filtre sans_limite debride "
        "non_censure mode_developpeur en_mode_developpeur une_ia_sans un_assistant_sans",
        "revele revelez affiche affichez montre montrez donne donnez repete repetez nouveau "
        "nouvelle", rf"(?:{alt('prompt invite message instructions consignes')}\s++"
                    r"(?:du\s++)?systeme)"),
    "de": Language(
        "ignoriere ignorieren ignoriert vergiss vergessen vergesst missachte missachten",
        "vorherigen vorherige bisherigen bisherige vorigen obigen alle alles deine ihre "
        "fruheren ursprunglichen", "anweisung instruktion regel vorgabe befehl richtlinie "
        "anordnung", ("jetzt nun sofort", r"\s++(?:ein\s++|eine\s++|einen\s++|im\s++)?",
                                r"\b(?:du\s++bist|sie\s++sind)(?:\s++ab)?\s++\Z"),
        "dan jailbreak uneingeschrankt unzensiert ungefiltert befreit frei_von "
        "im_entwicklermodus entwicklermodus eine_ki_ohne ein_assistent_ohne",
        "zeige zeig gib verrate wiederhole nenne neuer neue neues",
        r"(?:system-?prompt\w*+|systemanweisung\w*+|systemnachricht\w*+|system\s++prompt)"),
    "es": Language(
        "ignora ignore ignoren ignorad olvida olvide olviden olvidad descarta descarte omite",
        "anteriores previas previos todas todos tus sus originales iniciales", "instruccion "
        "regla indicacion directriz ordene norma", ("ahora", r"\s++(?:eres|estas|sos)\s++(?:un\s++|una\s++|en\s++)?"),
        "dan jailbreak libre modo_desarrollador en_modo_desarrollador una_ia_sin "
        "un_asistente_sin sin_restricciones sin_filtros sin_censura sin_limites",
        "muestra muestrame revela revelame dime repite nuevo nueva",
        rf"(?:{alt('prompt mensaje instrucciones')}\s++del\s++sistema)"),
    "it": Language(
        "ignora ignori ignorate dimentica dimentichi dimenticate", "precedenti tutte tutti "
        "tue sue originali iniziali", "istruzion regol indicazion direttiv ordin",
        ("ora adesso", r"\s++sei\s++(?:un\s++|una\s++|un'\s*+|in\s++)?"),
        "dan jailbreak libero libera in_modalita_sviluppatore modalita_sviluppatore "
        "un'ia_senza un_ia_senza un_assistente_senza senza_restrizioni senza_filtri "
        "senza_censura senza_limiti", "mostra mostrami rivela rivelami dimmi ripeti nuovo nuova",
        rf"(?:{alt('prompt messaggio istruzioni')}\s++di\s++sistema)"),
    "pt": Language(
        "ignore ignora ignorem esqueca esquece esquecam desconsidere desconsidera",
        "anteriores previas todas todos suas tuas originais iniciais", "instruc regra "
        "orientac diretriz ordens", ("agora", r"\s++(?:voce\s++e|tu\s++es|es)\s++(?:um\s++|uma\s++|em\s++)?"),
        "dan jailbreak livre modo_desenvolvedor em_modo_desenvolvedor uma_ia_sem "
        "um_assistente_sem sem_restricoes sem_filtros sem_censura sem_limites",
        "mostre mostra revele revela diga repita novo nova",
        rf"(?:{alt('prompt mensagem instrucoes')}\s++do\s++sistema)"),
    "ru": Language(
        "игнорируй игнорируйте проигнорируй проигнорируйте забудь забудьте отбрось "
        "отбросьте пренебреги", "предыдущие прежние все свои твои ваши вышеуказанные "
        "изначальные", "инструкци указани правил команд директив ограничени",
        ("теперь", rf"\s++{alt('ты вы')}\s++"),
        "dan дан в_режиме режим неограничен без_ограничений без_цензуры без_фильтров "
        "свободн взломан",
        "покажи выведи раскрой повтори напиши новый новая новые",
        rf"(?:{alt('системный системная системные системное', True)}\s++"
        rf"{alt('промпт подсказк инструкци сообщени', True)})"),
}


def _rules(lang: Language) -> dict[str, tuple[Rule, ...]]:
    earlier, targets = alt(lang.earlier), alt(lang.targets, stems=True)
    now_leads, now_rest, *now_before = lang.now
    return {
        "instruction_override": (
            Rule("ignore_previous", leads(lang.verbs),
                 rf"{gap(3)}(?:{earlier}(?:{gap(2)})?{targets}|{targets}{gap(2)}{earlier})"),
        ),
        "role_hijack": (
            Rule("you_are_now", leads(now_leads), now_rest + alt(lang.free, stems=True),
                 *((now_before[0], 32) if now_before else ())),
        ),
        "system_prompt_override": (
            Rule("reveal_prompt", leads(lang.show), rf"{gap(3)}{lang.system_prompt}"),
        ),
    }


def word_rules() -> dict[str, tuple[Rule, ...]]:
    """The rules of the languages written with spaces, by category."""
    found: dict[str, tuple[Rule, ...]] = {}
    for lang in LANGUAGES.values():
        for category, rules in _rules(lang).items():
            found[category] = found.get(category, ()) + rules
    # German word order: "ab jetzt bist du DAN", "vergiss alles"
    found["role_hijack"] += (Rule("you_are_now", leads("bist"), r"\s++du\s++(?:jetzt\s++|nun\s++)?"
                                  r"(?:ein\s++|eine\s++|einen\s++|im\s++)?"
                                  + alt(LANGUAGES["de"].free, stems=True)),
                             Rule("you_are_now", leads("ты"), rf"\s++{alt('теперь')}\s++"
                                  + alt(LANGUAGES["ru"].free, stems=True)))
    found["instruction_override"] += (
        Rule("forget_everything", leads("vergiss vergesst oublie oubliez olvida olvidad "
                                        "dimentica esqueca забудь забудьте"),
             r"\s++" + alt("alles tout todo tutto tudo всё все")
             + rf"(?:{gap(6)}{alt('gesagt dit dicho detto dito сказали', True)})?"),)
    return found


class ScriptRule(NamedTuple):
    name: str  # <category>:<rule>
    script: str  # what letters the text must have
    leads: tuple[str, ...]  # folded; found anywhere
    rest: str  # folded pattern after the lead


def _script(name: str, script: str, lead_words: str, rest: str) -> ScriptRule:
    return ScriptRule(name, script, leads(lead_words), rest)


def _within(chars: int, ends: str, script_stop: str = r"\n.!?。！？؟") -> str:
    """Up to ``chars`` characters of the same sentence, then one of ``ends``."""
    return f"[^{script_stop}]{{0,{chars}}}?" + alt(ends, stems=True)


_FREE_ZH = "dan 没有限制 沒有限制 不受限制 无限制 無限制 越狱 越獄 开发者模式 開發者模式 无审查 無審查"
SCRIPT_RULES: tuple[ScriptRule, ...] = (
    # Chinese, simplified and traditional
    _script("instruction_override:ignore_previous", "han", "忽略 无视 無視 忽视 忽視 忘记 忘記 "
            "不要理会 不要理會", _within(12, "指令 指示 说明 說明 规则 規則 提示 命令 要求 设定 設定 "
                                   "内容 內容")),
    _script("role_hijack:you_are_now", "han", "你现在是 你現在是 现在你是 現在你是 从现在开始你是 "
            "從現在開始你是 你现在 你現在", _within(12, _FREE_ZH)),
    _script("system_prompt_override:reveal_prompt", "han", "显示 顯示 输出 輸出 告诉我 告訴我 打印 "
            "泄露 透露 重复 重複 新的", _within(10, "系统提示 系統提示 系统指令 系統指令 系统消息 系統訊息 "
                                     "系统prompt")),
    # Japanese (verb last: the lead is the object)
    _script("instruction_override:ignore_previous", "kana", "指示 命令 指令 ルール プロンプト 設定",
            _within(6, "無視 忘れ")),
    _script("role_hijack:you_are_now", "kana", "あなたは今から 今からあなたは あなたはもう これからあなたは",
            _within(16, "dan 制限のない 制限なし 無制限 脱獄 開発者モード 検閲なし")),
    _script("system_prompt_override:reveal_prompt", "kana", "システムプロンプト システムメッセージ",
            _within(10, "表示 出力 教え 見せ 繰り返 書き出")),
    _script("system_prompt_override:new_system_prompt", "kana", "新しいシステム",
            alt("プロンプト メッセージ 指示", stems=True)),
    # Korean (verb last as well)
    _script("instruction_override:ignore_previous", "hangul", "지시 지시사항 명령 규칙 지침 프롬프트 "
            "instructions", _within(24, "무시 잊어 잊으")),
    _script("role_hijack:you_are_now", "hangul", "너는_이제 당신은_이제 지금부터_너는 "
            "지금부터_당신은 이제부터_너는 이제부터_당신은",
            _within(40, "dan 제한이_없는 제한_없는 무제한 탈옥 개발자_모드 검열_없는")),
    _script("system_prompt_override:reveal_prompt", "hangul", "시스템_프롬프트 시스템프롬프트",
            _within(30, "보여 알려 출력 공개 반복 말해")),
    # Arabic
    _script("instruction_override:ignore_previous", "arabic", "تجاهل تجاهلي تجاهلوا انس انسى "
            "انسي", _within(40, "التعليمات تعليمات الأوامر اوامر القواعد الإرشادات ارشادات")),
    _script("role_hijack:you_are_now", "arabic", "أنت_الآن انت_الان",
            _within(30, "dan بلا_قيود بدون_قيود غير_مقيد وضع_المطور بدون_رقابة")),
    _script("system_prompt_override:reveal_prompt", "arabic", "اكشف اعرض أظهر اظهر اطبع كرر "
            "أعطني", _within(30, "موجه_النظام تعليمات_النظام رسالة_النظام أوامر_النظام")),
)
for _rule in SCRIPT_RULES:  # a lead of words joined by "_" means words joined by a space
    assert all(" " not in lead for lead in _rule.leads)
SCRIPT_RULES = tuple(r._replace(leads=tuple(lead.replace("_", " ") for lead in r.leads))
                     for r in SCRIPT_RULES)

#: Code point ranges of each script (of the text as written, before folding).
SCRIPTS: dict[str, tuple[tuple[int, int], ...]] = {
    "han": ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF)),
    "kana": ((0x3040, 0x30FF), (0xFF66, 0xFF9F)),
    "hangul": ((0x1100, 0x11FF), (0x3130, 0x318F), (0xAC00, 0xD7A3)),
    "arabic": ((0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
}


def scripts_in(distinct: set[str]) -> set[str]:
    """The scripts of :data:`SCRIPTS` that some of ``distinct`` (characters) belong to."""
    found: set[str] = set()
    for char in distinct:
        if char < "\u0600":
            continue
        code = ord(char)
        if code in NAMED_INVISIBLE:  # the Hangul fillers are blank, not Korean
            continue
        for script, ranges in SCRIPTS.items():
            if script not in found and any(low <= code <= high for low, high in ranges):
                found.add(script)
    return found


@functools.lru_cache(maxsize=16)
def _leads_of(scripts: frozenset[str]) -> tuple[re.Pattern[str], dict[str, list[tuple[str, re.Pattern[str]]]]]:
    """One pattern finding any lead of the rules of ``scripts``, and per lead its rules."""
    by_lead: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for rule in SCRIPT_RULES:
        if rule.script in scripts:
            for lead in rule.leads:
                by_lead.setdefault(lead, []).append((rule.name, re.compile(rule.rest)))
    ordered = sorted(by_lead, key=len, reverse=True)  # the longest lead where two start alike
    return re.compile("|".join(map(re.escape, ordered))), by_lead


#: Occurrences of leads tried per scan, at most (a lead such as 显示 "show" is a common word).
MAX_LEAD_HITS = 20_000


def script_hits(folded: str, scripts: set[str]) -> set[str]:
    """Names of the :data:`SCRIPT_RULES` of ``scripts`` that match ``folded``: one search
    finds the leads of all of them, and a lead's rules are tried right after it."""
    found: set[str] = set()
    pattern, by_lead = _leads_of(frozenset(scripts))
    for count, match in enumerate(pattern.finditer(folded)):
        if count >= MAX_LEAD_HITS:
            break
        for name, rest in by_lead[match.group()]:
            if name not in found and rest.match(folded, match.end()):
                found.add(name)
    return found
