"""Owner: the builtin plugin `sessions` (the postgres session store uses it too).

Session-store values every backend shares: arguments normalised at the API edge, and
message values turned into column text and back.

Edge rules (:func:`public_methods_at_edge`):

* Text: lone surrogates cannot be stored as UTF-8. Python decodes undecodable bytes (argv, file
  names, ``errors="surrogateescape"`` streams) into U+DC80-U+DCFF; those are turned back into
  their bytes and decoded again, so UTF-8 that was mis-decoded comes back as written and truly
  invalid bytes become U+FFFD. A surrogate pair written as two code points is joined; any other
  lone surrogate becomes U+FFFD.
* Counts (``limit``, ``offset``) are integers in a stated range; any other integer argument
  must fit in 64 bits. Otherwise :class:`InvalidArgumentError` names the range.
* Lists of names (``source_filter``, ``exclude_sources``, ``role_filter``,
  ``exclude_sessions``): a single string is one name (``sources="cli"`` means ``["cli"]``);
  anything that is not a string or an iterable of strings is a :class:`InvalidArgumentError`.

Columns: content that is a list of parts is JSON behind :data:`JSON_PREFIX`; the JSON columns
hold JSON text; titles are cleaned by :func:`sanitize_title`.
"""


from __future__ import annotations

import codecs
import functools
import inspect
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_agent.api import InvalidArgumentError

F = TypeVar("F", bound=Callable[..., Any])
MAX_STORE_LIMIT = MAX_LIMIT = 1_000_000
MAX_OFFSET = 2**31 - 1
INT64 = (-(2**63), 2**63 - 1)
COUNTS = {"limit": (0, MAX_LIMIT), "offset": (0, MAX_OFFSET)}
NAME_LISTS = frozenset({"source_filter", "exclude_sources", "role_filter", "exclude_sessions"})
_HANDLER = "hermes-surrogates"


def _surrogates(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encode error handler: escaped bytes back to bytes, pairs joined, the rest U+FFFD."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text, out, i = exc.object, bytearray(), exc.start
    while i < exc.end:
        code = ord(text[i])
        nxt = ord(text[i + 1]) if i + 1 < len(text) else 0
        if 0xDC80 <= code <= 0xDCFF:
            out.append(code - 0xDC00)
        elif 0xD800 <= code <= 0xDBFF and 0xDC00 <= nxt <= 0xDFFF:
            joined = 0x10000 + ((code - 0xD800) << 10) + (nxt - 0xDC00)
            out += chr(joined).encode("utf-8")
            i += 1
        else:
            out += "\ufffd".encode("utf-8")
        i += 1
    return bytes(out), i


codecs.register_error(_HANDLER, _surrogates)


def clean_text(value: str) -> str:
    """``value`` as text SQLite can store (see the module docstring); unchanged when valid."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", _HANDLER).decode("utf-8", "replace")


def check_count(name: str, value: Any, low: int, high: int, *, none_ok: bool = False) -> Any:
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArgumentError(
            f"{name} must be an integer from {low} to {high}"
            f"{' or None' if none_ok else ''}, not {value!r}")
    return value


def name_list(name: str, value: Any) -> list[str] | None:
    """``value`` as a list of names: None stays None, a string is one name."""
    if value is None:
        return None
    if isinstance(value, str):
        return [clean_text(value)]
    if isinstance(value, (bytes, bytearray)) or not hasattr(value, "__iter__"):
        raise InvalidArgumentError(f"{name} must be a string or a list of strings, not "
                                   f"{type(value).__name__}")
    items = list(value)
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise InvalidArgumentError(f"{name} must hold strings only; got {bad[0]!r}")
    return [clean_text(v) for v in items]


def _normalise(name: str, value: Any, default: Any) -> Any:
    if isinstance(value, str):
        return name_list(name, value) if name in NAME_LISTS else clean_text(value)
    if name in NAME_LISTS:
        return name_list(name, value)
    if name in COUNTS:
        low, high = COUNTS[name]
        return check_count(name, value, low, high, none_ok=default is None)
    if isinstance(value, int) and not isinstance(value, bool) and not (
            INT64[0] <= value <= INT64[1]):
        raise InvalidArgumentError(f"{name} must fit in a 64-bit integer "
                                   f"({INT64[0]} to {INT64[1]}), not {value}")
    return value


def at_edge(fn: F) -> F:
    """Normalise every argument of a public store method as described above."""
    params = list(inspect.signature(fn).parameters.values())[1:]  # without self
    names = [p.name for p in params]
    defaults = {p.name: p.default for p in params}

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(_normalise(n, v, defaults.get(n)) for n, v in zip(names, args))
        kwargs = {k: _normalise(k, v, defaults.get(k)) for k, v in kwargs.items()}
        return fn(self, *args, **kwargs)
    wrapper.at_edge = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def public_methods_at_edge(cls: type) -> type:
    """Apply :func:`at_edge` to every public method of ``cls``, inherited ones included (those
    are wrapped on ``cls``; a base class stays as it is)."""
    seen: set[str] = set()
    for base in cls.__mro__[:-1]:  # without object
        for name, member in list(vars(base).items()):
            if name in seen:
                continue
            seen.add(name)
            if (not name.startswith("_") and inspect.isfunction(member) and name != "close"
                    and not getattr(member, "at_edge", False)):
                setattr(cls, name, at_edge(member))
    return cls


# Content that is a list of parts (multimodal) is stored as JSON behind this marker; stores
# written by Hermes Agent use the same marker, so imported rows decode alike.
JSON_PREFIX = "\x00json:"
JSON_COLUMNS = ("tool_calls", "reasoning_details", "codex_reasoning_items", "codex_message_items",
                "provenance")
MAX_TITLE = 100
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0 and C1 (CSI drives terminals)
#: invisible and reordering format characters (bidi overrides, zero-width spaces)
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def clean_optional(value: str | None) -> str | None:
    """:func:`clean_text` that lets None through."""
    return None if value is None else clean_text(value)


def encode_content(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return clean_optional(content)
    if isinstance(content, (int, float)):
        return str(content)
    return JSON_PREFIX + clean_text(json.dumps(content, ensure_ascii=False, default=str))


def decode_content(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(JSON_PREFIX):
        try:
            return json.loads(value[len(JSON_PREFIX):])
        except ValueError:
            return value
    return value


def encode_json(value: Any) -> str | None:
    """A JSON column: text is kept as given (already JSON), other values are serialised."""
    if value is None or value == [] or value == {}:
        return None
    if isinstance(value, str):
        return clean_optional(value)
    return clean_text(json.dumps(value, ensure_ascii=False, default=str))


def decode_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def sanitize_title(title: str | None) -> str | None:
    """Trim, drop control and invisible format characters, collapse whitespace, cap at 100;
    empty means no title."""
    if title is None:
        return None
    text = " ".join(_CONTROL.sub(" ", _INVISIBLE.sub("", clean_text(title))).split())
    return text[:MAX_TITLE].rstrip() or None


def tool_call_count(tool_calls: Any) -> int:
    if not tool_calls:
        return 0
    if isinstance(tool_calls, str):
        try:
            tool_calls = json.loads(tool_calls)
        except ValueError:
            return 1
    return len(tool_calls) if isinstance(tool_calls, list) else 1


# --- the session's model_config JSON ---------------------------------------------------------
USAGE_ESTIMATED = "usage_estimated"  # key in model_config: some token counts are estimates


def model_config_dict(session: Any) -> dict[str, Any]:
    """A session row's ``model_config`` as a dict ({} when unset or not a JSON object)."""
    raw = session.get("model_config") if isinstance(session, dict) else None
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else raw
    except ValueError:
        return {}
    return dict(value) if isinstance(value, dict) else {}


def mark_usage_estimated(store: Any, session_id: str) -> None:
    """Note in a stored session's ``model_config`` that its token counts include estimates
    (state.db keeps the original's columns, so the mark lives in that JSON)."""
    session = store.get_session(session_id) or {}
    config = model_config_dict(session)
    if session and not config.get(USAGE_ESTIMATED):
        config[USAGE_ESTIMATED] = True
        store.update_session_model(session_id, session.get("model") or "", config)


def usage_estimated(session: Any) -> bool:
    """Whether a session row's token counts include estimates (a server reported no usage);
    surfaces show them with ``~``."""
    return bool(model_config_dict(session).get(USAGE_ESTIMATED))
