"""Pydantic models of plugin.yaml and config.yaml, imported only when a file has to be
(re)validated (see :class:`~.home.ValidationCache`); errors render as ``location: message``.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from typing import Any, ClassVar, Literal, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from .manifest import CARDINALITIES, KINDS, CliDeclaration, EnvRequirement, Manifest, SlotDeclaration

PLUGIN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
CLI_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")  # `hermes NAME`
# "package.module:attr", or ".module:attr" / ".:attr" relative to the plugin's own package
ENTRY_RE = re.compile(r"^(\.|\.?[A-Za-z_]\w*(\.[A-Za-z_]\w*)*):[A-Za-z_]\w*\Z")
SECTION_RE = re.compile(r"^[a-z][a-z0-9_]*\Z")  # a top-level config.yaml key
KEPT_RE = re.compile(r"^[a-z_][a-z0-9_]*\Z")  # a top-level key an earlier version used
SLOT_KEY_RE = re.compile(r"^([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)?\Z")  # "section.key" or ""


def _check(value: str, pattern: re.Pattern[str], problem: str) -> str:
    if not pattern.match(value):
        raise ValueError(problem.format(value=repr(value)))
    return value


_ENTRY = ("{value} is not 'module:attribute' (e.g. '.cli:command', relative to the plugin's "
          "package, or 'package.module:command')")
_ENV = "{value} is not an environment variable name"


# Checks of the values plugin.yaml writes; each field itself is written once, in Manifest.
def _env_name(value: Any) -> Any:
    return _check(value, ENV_NAME_RE, _ENV + " (letters, digits, _)")


def _env_names(value: list[Any]) -> list[Any]:
    for item in value:
        if isinstance(item, str):
            _check(item, ENV_NAME_RE, _ENV)
    return value


def _cli_shorthand(value: Any) -> Any:
    """``name: "module:attr"`` is short for ``name: {entry: "module:attr"}``."""
    if isinstance(value, dict):
        return {k: {"entry": v} if isinstance(v, str) else v for k, v in value.items()}
    return value


def _cli_names(value: dict[str, Any]) -> dict[str, Any]:
    for name in value:
        _check(name, CLI_NAME_RE, "{value} is not a command name (lower-case letters, "
               "digits and '-', e.g. weather-report)")
    return value


def _sections(value: dict[str, str]) -> dict[str, str]:
    for key, target in value.items():
        _check(key, SECTION_RE, "{value} is not a config.yaml key (lower-case letters, "
               "digits and '_')")
        _check(target, ENTRY_RE, _ENTRY)
    return value


def _section_names(value: list[Any]) -> list[Any]:
    for item in value:  # an earlier version's keys may start with '_' (_config_version)
        if isinstance(item, str):
            _check(item, KEPT_RE, "{value} is not a config.yaml key (lower-case letters, "
                   "digits and '_')")
    return value


def _model_of(cls: type, extra: str, checks: list[tuple[str, str, Any]],
              written: dict[Any, Any]) -> type[BaseModel]:
    """The pydantic model validating the plain dataclass ``cls`` as plugin.yaml writes it:
    its fields and defaults, tuples as lists, ``written`` (a field name or an item type ->
    the type written instead) and ``checks`` (field, mode, function)."""
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if item.name == "synthesized":  # set by hermes, never written
            continue
        hint = written.get(item.name, hints[item.name])
        default = ... if item.default is dataclasses.MISSING else item.default  # ...: required
        if item.default_factory is not dataclasses.MISSING:
            default = Field(default_factory=item.default_factory)
        if get_origin(hint) is tuple:
            hint = list[written.get(get_args(hint)[0], get_args(hint)[0])]  # type: ignore[misc]
            default = Field(default_factory=list)
        fields[item.name] = (hint, default)
    validators = {f"check_{name}_{mode}": field_validator(name, mode=mode)(fn)  # type: ignore
                  for name, mode, fn in checks}
    return create_model(cls.__name__, __config__=ConfigDict(extra=extra),  # type: ignore
                        __validators__=validators, **fields)


EnvModel = _model_of(EnvRequirement, "allow", [("name", "after", _env_name)], {})
SlotModel = _model_of(SlotDeclaration, "forbid", [
    ("config_key", "after", lambda value: _check(value, SLOT_KEY_RE, "{value} is not a "
                                                 "config.yaml key 'section.key' (e.g. memory.provider)")),
], {"cardinality": Literal[CARDINALITIES]})  # type: ignore[valid-type]
CliModel = _model_of(CliDeclaration, "forbid",
                     [("entry", "after", lambda value: _check(value, ENTRY_RE, _ENTRY))], {})
ManifestModel = _model_of(Manifest, "forbid", [
    ("name", "after", lambda value: _check(value, PLUGIN_NAME_RE, "use letters, digits, '-', "
                                           "'_' or '.', starting with a letter or digit")),
    ("version", "before", lambda value: str(value) if isinstance(value, (int, float)) else value),
    ("requires_env", "after", _env_names), ("optional_env", "after", _env_names),
    ("cli_commands", "before", _cli_shorthand), ("cli_commands", "after", _cli_names),
    ("config_sections", "after", _sections), ("legacy_config", "after", _section_names),
], {"kind": Literal[KINDS], EnvRequirement: str | EnvModel,  # type: ignore[valid-type]
    "cli_commands": dict[str, CliModel], "slots": dict[str, SlotModel]})  # type: ignore[valid-type]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class PluginEntry(_Section):
    report_unknown_keys: ClassVar[bool] = False  # a plugin's own settings live here
    allow_tool_override: bool = False


class PluginsSection(_Section):
    enabled: list[str] | None = None
    disabled: list[str] = Field(default_factory=list)
    entries: dict[str, PluginEntry] = Field(default_factory=dict)


class ProjectsSection(_Section):
    trusted: list[str] = Field(default_factory=list)  # folders (kernel/trust.py)

    @field_validator("trusted")
    @classmethod
    def _folders(cls, value: list[str]) -> list[str]:
        for item in value:
            if not (item.startswith("/") or item == "~" or item.startswith("~/")):
                raise ValueError(f"{item!r} is not an absolute folder; write it as /full/path "
                                 "or ~/path (`hermes trust PATH` writes it for you)")
        return value


#: The keys the kernel reads; plugins add theirs (:func:`config_model`).
ConfigModel = create_model(  # type: ignore[call-overload]
    "ConfigModel", __base__=_Section,
    plugins=(PluginsSection, Field(default_factory=PluginsSection)),
    projects=(ProjectsSection, Field(default_factory=ProjectsSection)))


def _slot_sections(slots: dict[str, dict[str, str]]) -> dict[str, type[BaseModel]]:
    """A section per top-level key holding slot selections (``memory``: ``provider``), with
    the defaults the slots' declarations give; ``slots``: section -> key -> default."""
    return {section: create_model(f"{section.title()}Section", __base__=_Section,
                                  **{key: (str, default) for key, default in keys.items()})
            for section, keys in slots.items()}


_COMPOSED: dict[str, type[BaseModel]] = {}


def config_model(sections: dict[str, str], slots: dict[str, dict[str, str]] | None = None,
                 owners: dict[str, str] | None = None) -> type[BaseModel]:
    """:class:`ConfigModel` plus the top-level keys plugins declare: ``sections`` maps a key
    to the ``"module:attr"`` of a pydantic model (a section) or of a ``(type, default)``
    pair; ``slots`` (section -> key -> default) the slots' selection keys. A plugin's section
    for a key holding slot selections extends that slot section (``memory``: its limits and
    ``memory.provider``); only the plugin declaring the slot (``owners``: section -> its
    module) may replace it with a pair (the models plugin's ``model: <id>``)."""
    key = repr((sorted(sections.items()), sorted((slots or {}).items()),
                sorted((owners or {}).items())))
    if key not in _COMPOSED:
        fields: dict[str, Any] = {name: (model, Field(default_factory=model))
                                  for name, model in _slot_sections(slots or {}).items()}
        for name, target in sections.items():
            module, _, attr = target.partition(":")
            spec = getattr(importlib.import_module(module), attr)
            own = fields.get(name)
            section = isinstance(spec, type) and issubclass(spec, BaseModel)
            owner = (owners or {}).get(name, "")
            if name in ConfigModel.model_fields or (own is not None and not section and not (
                    owner and (module == owner or module.startswith(owner + ".")))):
                raise TypeError(f"config section {name!r} ({target}) clashes with the kernel's "
                                "key of that name; only a section may extend it")
            if own is not None and section:
                spec = create_model(spec.__name__, __base__=(own[0], spec))
            fields[name] = (spec, Field(default_factory=spec)) if isinstance(spec, type) else spec
        _COMPOSED[key] = create_model("HermesConfig", __base__=ConfigModel, **fields)
    return _COMPOSED[key]


_HINTS = {
    "list_type": "write it as a YAML list, e.g. [a, b]",
    "dict_type": "write it as a YAML mapping (key: value lines)",
    "bool_type": "use true or false",
    "string_type": "write it as text",
    "int_type": "write a whole number",
    "float_type": "write a number",
    "extra_forbidden": "remove it, or check its spelling",
    "missing": "add it",
}
_HIDDEN = ("str", "list[str]", "EnvRequirement", "ModelSection", "dict[str,any]")


def _is_branch(part: Any) -> bool:
    """Whether a location part names a union branch (a type: ``str``, ``ModelSection``,
    ``list[str]``) rather than a key (keys are lower-case)."""
    return isinstance(part, str) and (part[:1].isupper() or "[" in part
                                      or part in ("str", "int", "float", "bool", "none"))


def render_errors(error: ValidationError, prefix: str = "") -> list[str]:
    """Render pydantic errors as ``location: message (fix)`` lines."""
    lines = []
    items = error.errors()
    # Where a union's branch got past the type check (its errors lie deeper, e.g.
    # model.max_retries for `ModelSection | str`), the other branches' type mismatches
    # ("model: Input should be a valid string") only add noise.
    deeper = {tuple(i["loc"][:-2]) for i in items if len(i["loc"]) >= 2 and _is_branch(i["loc"][-2])}
    for item in items:
        loc = tuple(item["loc"])
        if loc and _is_branch(loc[-1]) and loc[:-1] in deeper and item["type"].endswith("_type"):
            continue
        where = ".".join(str(part) for part in (prefix, *loc) if part != "" and not (
            isinstance(part, str) and part.startswith(("function-", "union[")))
            and part not in _HIDDEN) or "(top level)"
        hint = _HINTS.get(item["type"], "")
        lines.append(f"{where}: {item['msg']}" + (f" ({hint})" if hint else ""))
    return list(dict.fromkeys(lines))


def unknown_keys(model: BaseModel, prefix: str = "") -> list[tuple[str, list[str]]]:
    """Keys that validated only as extras: each as its dotted path and the names its model
    knows at that level (for spelling suggestions)."""
    known = list(type(model).model_fields)
    found = [(f"{prefix}{key}", known) for key in model.model_extra or {}]
    for name in known:
        value = getattr(model, name)
        children = value.items() if isinstance(value, dict) else [(None, value)]
        for key, child in children:
            if isinstance(child, BaseModel) and getattr(child, "report_unknown_keys", True):
                sub = f"{prefix}{name}." if key is None else f"{prefix}{name}.{key}."
                found.extend(unknown_keys(child, sub))
    return found
