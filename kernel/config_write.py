"""Writing config.yaml: one dotted key at a time, validated first, keeping everything else
as the user wrote it (other keys, comments, order, indentation) through a round-trip YAML
editor (:mod:`.yaml_edit`, whose YAML library loads on the first write only).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from .config import CONFIG_FILE, check_config, parse_config_text, set_dotted
from .errors import ConfigError
from .home import FILE_MODE, private_dir, write_atomic

from . import yaml_edit
from .yaml_edit import pop_dotted

__all__ = ["write_config_value"]


def write_config_value(home: Path, dotted: str, value: Any, *, unset: bool = False,
                       allow_unknown: bool = True) -> bool:
    """Set (or remove) one dotted key in config.yaml, keeping everything else as the user
    wrote it: other keys, comments, order and indentation. Returns False when there was
    nothing to change (unsetting a key that is not there).

    The result is validated first: a value that adds a problem raises :class:`ConfigError`
    and the file is left untouched (problems the file already had do not block fixing
    another key). With ``allow_unknown=False`` a key this version does not know is refused,
    naming the closest known one.
    """
    path = home / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")  # read once: the edit starts from this text
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}", path=str(path)) from exc
    before = parse_config_text(text, path)
    after = copy.deepcopy(before)
    if unset:
        if not pop_dotted(after, dotted):
            return False
    else:
        set_dotted(after, dotted, value)
    hit, _ = check_config(home, after)
    if "error" in hit:
        old, _ = check_config(home, before)
        added = [line for line in hit["error"] if line not in old.get("error", [])]
        if added:
            raise ConfigError(f"{path} would have invalid settings:", added, path=str(path))
    elif not allow_unknown and not unset:
        _refuse_unknown(dotted, hit["unknown"], path)
    new_text = (yaml_edit.unset_key(text, dotted) if unset
                else yaml_edit.set_key(text, dotted, value))
    if new_text is not None:
        private_dir(home)
        mode = path.stat().st_mode & 0o7777 if path.exists() else FILE_MODE  # the user's mode stays
        write_atomic(path, new_text, mode=mode)
    return True


def _refuse_unknown(dotted: str, unknown: dict[str, str], path: Path) -> None:
    for key, close in unknown.items():
        if dotted == key or dotted.startswith(key + ".") or key.startswith(dotted + "."):
            hint = f"did you mean '{close}'? " if close else ""
            raise ConfigError(f"'{key}' is not a setting this version knows ({hint}`hermes "
                              "config show` lists them); pass --force to save it anyway",
                              path=str(path))
