"""Pydantic models of plugin.yaml and config.yaml, imported only when a file has to be
(re)validated (see :class:`~.home.ValidationCache`); errors render as ``location: message``.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from .slots import SLOT_INFO

PLUGIN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CLI_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # `hermes NAME`
# "package.module:attr", or ".module:attr" / ".:attr" relative to the plugin's own package
ENTRY_RE = re.compile(r"^(\.|\.?[A-Za-z_]\w*(\.[A-Za-z_]\w*)*):[A-Za-z_]\w*$")
SECTION_RE = re.compile(r"^[a-z][a-z0-9_]*$")  # a top-level config.yaml key


def _check(value: str, pattern: re.Pattern[str], problem: str) -> str:
    if not pattern.match(value):
        raise ValueError(problem.format(value=repr(value)))
    return value


_ENTRY = ("{value} is not 'module:attribute' (e.g. '.cli:command', relative to the plugin's "
          "package, or 'package.module:command')")
_ENV = "{value} is not an environment variable name"


class EnvVarSpec(BaseModel):
    """The rich form of a ``requires_env`` / ``optional_env`` entry."""

    model_config = ConfigDict(extra="allow")
    report_unknown_keys: ClassVar[bool] = False
    name: str
    description: str = ""
    url: str = ""
    secret: bool = False

    @field_validator("name")
    @classmethod
    def _env_name(cls, value: str) -> str:
        return _check(value, ENV_NAME_RE, _ENV + " (letters, digits, _)")


class CliCommandSpec(BaseModel):
    """One ``cli_commands`` entry: the click command at ``entry`` (imported when it runs)
    and its ``hermes --help`` line."""

    model_config = ConfigDict(extra="forbid")
    entry: str
    help: str = ""

    @field_validator("entry")
    @classmethod
    def _entry_text(cls, value: str) -> str:
        return _check(value, ENTRY_RE, _ENTRY)


class ManifestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)

    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    kind: Literal["standalone", "backend", "exclusive", "platform", "model-provider"] = "standalone"
    requires_env: list[str | EnvVarSpec] = Field(default_factory=list)
    optional_env: list[str | EnvVarSpec] = Field(default_factory=list)
    provides_tools: list[str] = Field(default_factory=list)
    provides_hooks: list[str] = Field(default_factory=list)
    manifest_version: int = 1
    license: str = ""
    homepage: str = ""
    tags: list[str] = Field(default_factory=list)
    requires_hermes: str = ""
    python_dependencies: list[str] = Field(default_factory=list)
    label: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    essential: bool = False
    cli_commands: dict[str, CliCommandSpec] = Field(default_factory=dict)
    config_sections: dict[str, str] = Field(default_factory=dict)

    @field_validator("cli_commands", mode="before")
    @classmethod
    def _cli_shorthand(cls, value: Any) -> Any:
        """``name: "module:attr"`` is short for ``name: {entry: "module:attr"}``."""
        if isinstance(value, dict):
            return {k: {"entry": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @field_validator("cli_commands")
    @classmethod
    def _cli_names(cls, value: dict[str, CliCommandSpec]) -> dict[str, CliCommandSpec]:
        for name in value:
            _check(name, CLI_NAME_RE, "{value} is not a command name (lower-case letters, "
                   "digits and '-', e.g. weather-report)")
        return value

    @field_validator("config_sections")
    @classmethod
    def _sections(cls, value: dict[str, str]) -> dict[str, str]:
        for key, target in value.items():
            _check(key, SECTION_RE, "{value} is not a config.yaml key (lower-case letters, "
                   "digits and '_')")
            _check(target, ENTRY_RE, _ENTRY)
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value

    @field_validator("name")
    @classmethod
    def _plugin_name(cls, value: str) -> str:
        return _check(value, PLUGIN_NAME_RE, "use letters, digits, '-', '_' or '.', starting "
                      "with a letter or digit")

    @field_validator("requires_env", "optional_env")
    @classmethod
    def _env_names(cls, value: list[Any]) -> list[Any]:
        for item in value:
            if isinstance(item, str):
                _check(item, ENV_NAME_RE, _ENV)
        return value


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class PluginEntry(_Section):
    report_unknown_keys: ClassVar[bool] = False  # a plugin's own settings live here
    allow_tool_override: bool = False


class PluginsSection(_Section):
    enabled: list[str] | None = None
    disabled: list[str] = Field(default_factory=list)
    entries: dict[str, PluginEntry] = Field(default_factory=dict)


class MemorySection(_Section):
    provider: str = SLOT_INFO["memory"].default


class ContextSection(_Section):
    engine: str = SLOT_INFO["context_engine"].default


class WebSection(_Section):
    backend: str = SLOT_INFO["web_search"].default


class SessionsSection(_Section):
    store: str = SLOT_INFO["session_store"].default
    dsn: str = ""  # a server-backed store's address (else its env var, e.g. HERMES_POSTGRES_DSN)


class ConfigModel(_Section):
    """The keys the kernel reads; builtin plugins add their own sections (:func:`config_model`)."""

    toolsets: list[str] | None = None
    plugins: PluginsSection = Field(default_factory=PluginsSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    context: ContextSection = Field(default_factory=ContextSection)
    web: WebSection = Field(default_factory=WebSection)
    sessions: SessionsSection = Field(default_factory=SessionsSection)
    platform_toolsets: dict[str, list[str]] = Field(default_factory=dict)


_COMPOSED: dict[tuple[tuple[str, str], ...], type[BaseModel]] = {}


def config_model(sections: dict[str, str]) -> type[BaseModel]:
    """:class:`ConfigModel` plus the top-level keys plugins declare: key -> ``"module:attr"``
    of a pydantic model (a section) or a ``(type, default)`` pair. A section for a key the
    kernel models itself extends the kernel's section (``memory``: ``memory.provider``)."""
    key = tuple(sorted(sections.items()))
    if key not in _COMPOSED:
        fields: dict[str, Any] = {}
        for name, target in sections.items():
            module, _, attr = target.partition(":")
            spec = getattr(importlib.import_module(module), attr)
            own = ConfigModel.model_fields.get(name)
            if own is not None:
                if not (isinstance(spec, type) and issubclass(spec, BaseModel)
                        and isinstance(own.annotation, type)
                        and issubclass(own.annotation, BaseModel)):
                    raise TypeError(f"config section {name!r} ({target}) clashes with the "
                                    "kernel's key; only a section may extend a kernel section")
                spec = create_model(spec.__name__, __base__=(own.annotation, spec))
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
_HIDDEN = ("str", "list[str]", "EnvVarSpec", "ModelSection", "dict[str,any]")


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
