"""Edit one dotted key of a YAML document while keeping everything else as the user wrote it:
comments, key order, quoting and indentation (round-trip with ``ruamel.yaml``).

Imported only when config.yaml is written, so reading the configuration never loads
ruamel.yaml.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Callable
from typing import Any


def set_key(text: str, dotted: str, value: Any) -> str:
    """``text`` with ``dotted`` set to ``value`` (parents created as mappings as needed)."""
    from ruamel.yaml.comments import CommentedMap

    yaml, data = _load(text)
    if data is None:
        data = CommentedMap()
    parts = dotted.split(".")
    changed = data  # the deepest mapping that exists already: its end may move
    for part in parts[:-1]:
        child = changed.get(part)
        if not isinstance(child, dict):
            break
        changed = child
    def assign() -> None:
        *parents, leaf = parts
        node = data
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = CommentedMap()
            node = child
        _assign(node, leaf, _commented(value))

    _keeping_tail(changed, assign)
    return _dump(yaml, data)


def unset_key(text: str, dotted: str) -> str | None:
    """``text`` without ``dotted``; mappings left empty by the removal go too. None when the
    key is not there (nothing to change)."""
    yaml, data = _load(text)
    if not isinstance(data, dict):
        return None
    changed = data  # the deepest mapping that keeps other keys: its end may move
    node: Any = data
    for part in dotted.split(".")[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and len(node) > 1:
            changed = node
    removed = [False]

    def remove() -> None:
        removed[0] = pop_dotted(data, dotted)

    _keeping_tail(changed, remove)
    if not removed[0]:
        return None
    return _dump(yaml, data) if data else ""


def _commented(value: Any) -> Any:
    """``value`` with its mappings and lists as ruamel's commentable types."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        return CommentedMap((k, _commented(v)) for k, v in value.items())
    if isinstance(value, list):
        return CommentedSeq(_commented(v) for v in value)
    return value


def _assign(node: dict[str, Any], key: str, value: Any) -> None:
    """Set ``node[key]``; a list replacing a list is changed in place, so the comments of the
    items that stay are kept (items no longer wanted are removed, new ones appended)."""
    old = node.get(key)
    if not (isinstance(old, list) and isinstance(value, list)):
        node[key] = value
        return
    for index in range(len(old) - 1, -1, -1):
        if old[index] not in value:
            del old[index]
    if list(old) != value[:len(old)]:
        del old[:]
    old.extend(value[len(old):])


# --- comments after a block ---------------------------------------------------------------
# ruamel keeps the comment lines that follow a block on the block's last item. When an item is
# appended or removed there, those lines must move to the new last item, or they would end up
# between the old last item and the new one (or vanish with it).

def _keeping_tail(container: Any, change: Callable[[], None]) -> None:
    tail = _take_tail(container)
    change()
    if tail is not None:
        _give_tail(container, tail)


def _last_slot(container: Any) -> tuple[Any, Any] | None:
    """The (container, key) of the last scalar at the end of ``container``, descending."""
    while isinstance(container, (dict, list)) and len(container):
        key = next(reversed(container)) if isinstance(container, dict) else len(container) - 1
        value = container[key]
        if isinstance(value, (dict, list)) and len(value) and hasattr(value, "ca"):
            container = value
            continue
        return (container, key) if hasattr(container, "ca") else None
    return None


def _take_tail(container: Any) -> Any | None:
    slot = _last_slot(container)
    if slot is None:
        return None
    owner, key = slot
    entry = owner.ca.items.get(key)
    position = 0 if isinstance(owner, list) else 2
    token = entry[position] if entry else None
    if token is None:
        return None
    line, newline, rest = token.value.partition("\n")
    if not rest:
        return None
    tail = copy.copy(token)
    tail.value = "\n" + rest
    if line:
        token.value = line + newline
    else:
        entry[position] = None
    return tail


def _give_tail(container: Any, tail: Any) -> None:
    slot = _last_slot(container)
    if slot is None:
        return
    owner, key = slot
    position = 0 if isinstance(owner, list) else 2
    entry = owner.ca.items.setdefault(key, [None, None, None, None])
    token = entry[position]
    if token is None:
        entry[position] = tail
    else:
        token.value = token.value.rstrip("\n") + tail.value


# --- reading and writing ------------------------------------------------------------------

def _load(text: str) -> tuple[Any, Any]:
    """A round-trip YAML instance set to the document's own indentation, and its data."""
    from ruamel.yaml import YAML
    from ruamel.yaml.util import load_yaml_guess_indent

    data, sequence, offset = load_yaml_guess_indent(text) if text.strip() else (None, 2, 0)
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long value onto a second line
    mapping = _mapping_indent(text)
    if offset is None:  # no block sequence to go by: the style PyYAML writes ("- a" under "k:")
        sequence, offset = mapping, 0
    yaml.indent(mapping=mapping, sequence=max(sequence or 2, offset + 2), offset=offset)
    return yaml, data


def _mapping_indent(text: str) -> int:
    """How far the document indents a nested mapping's keys (2 when it has none)."""
    parent: int | None = None
    for line in text.splitlines():
        body = line.lstrip()
        if not body or body.startswith("#"):
            continue
        column = len(line) - len(body)
        if parent is not None and column > parent and not body.startswith("-"):
            return column - parent
        opens_block = body.split(" #")[0].rstrip().endswith(":") and not body.startswith("-")
        parent = column if opens_block else None
    return 2


def _dump(yaml: Any, data: Any) -> str:
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()


def pop_dotted(data: dict[str, Any], dotted: str) -> bool:
    """Remove ``a.b.c`` and the mappings the removal leaves empty; False when it was not there."""
    parts = dotted.split(".")
    trail = [data]
    for part in parts[:-1]:
        child = trail[-1].get(part)
        if not isinstance(child, dict):
            return False
        trail.append(child)
    if parts[-1] not in trail[-1]:
        return False
    del trail[-1][parts[-1]]
    for depth in range(len(parts) - 1, 0, -1):
        if trail[depth]:
            break
        del trail[depth - 1][parts[depth - 1]]
    return True
