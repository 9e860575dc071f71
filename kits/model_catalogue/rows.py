"""Owner: the builtin plugin `models`. The rows of a provider catalogue file as pydantic
models, validated when a file is read for the first time (its result is cached: see the
package's docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hermes_agent.api import ProviderProfile
from hermes_agent.api.models import API_MODES

from . import CatalogueError, profile_from

ApiMode = Literal["chat_completions", "anthropic_messages", "codex_responses"]
assert set(ApiMode.__args__) == set(API_MODES)  # type: ignore[attr-defined]

ENV_NAME = r"^[A-Z][A-Z0-9_]*$"


class ModelRow(BaseModel):
    """One model of a profile: its id, and what its provider publishes about it. Unknown
    numbers stay empty (None), never guessed. Prices: US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    context_length: int | None = Field(default=None, gt=0)
    input_price: float | None = Field(default=None, ge=0)
    output_price: float | None = Field(default=None, ge=0)
    cache_read_price: float | None = Field(default=None, ge=0)
    cache_write_price: float | None = Field(default=None, ge=0)

    @property
    def priced(self) -> bool:
        return self.input_price is not None and self.output_price is not None


class ProfileRow(BaseModel):
    """One provider of the catalogue (the fields of ProviderProfile, as data)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    label: str = Field(min_length=1)
    description: str = ""
    api_mode: ApiMode = "chat_completions"
    base_url: str = ""
    key_env: tuple[str, ...] = ()
    base_url_env: str = ""
    default_model: str = ""
    auxiliary_model: str = ""
    aliases: tuple[str, ...] = ()
    key_required: bool = True
    local: bool = False
    auto_detect: bool = True
    models: tuple[ModelRow, ...] = ()
    key_url: str = ""
    default_headers: dict[str, str] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    default_max_tokens: int | None = Field(default=None, gt=0)
    supports_vision: bool = False

    @field_validator("models", mode="before")
    @classmethod
    def _model_ids(cls, value: Any) -> Any:
        """A bare id is a model with nothing else known."""
        if isinstance(value, list | tuple):
            return [{"id": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("key_env", "aliases", mode="before")
    @classmethod
    def _one_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("key_env")
    @classmethod
    def _env_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import re

        bad = [name for name in value if not re.match(ENV_NAME, name)]
        if bad:
            raise ValueError(f"not environment variable names: {', '.join(bad)}")
        return value

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url {value!r} must start with http:// or https://")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _consistent(self) -> ProfileRow:
        if self.base_url_env and not self.base_url_env.isupper():
            raise ValueError(f"base_url_env {self.base_url_env!r} is not a variable name")
        if self.key_required and not self.key_env:
            raise ValueError("a provider that needs a key names its variables (key_env), "
                             "or sets key_required: false")
        return self

    def fields(self) -> dict[str, Any]:
        """The row as ProviderProfile keyword arguments, in JSON types (what is cached)."""
        return {
            "name": self.name, "label": self.label, "api_mode": self.api_mode,
            "base_url": self.base_url, "key_env": list(self.key_env),
            "base_url_env": self.base_url_env, "default_model": self.default_model,
            "auxiliary_model": self.auxiliary_model, "aliases": list(self.aliases),
            "key_required": self.key_required, "local": self.local,
            "auto_detect": self.auto_detect, "models": [m.id for m in self.models],
            "key_url": self.key_url, "default_headers": dict(self.default_headers),
            "extra_body": dict(self.extra_body), "max_tokens_param": self.max_tokens_param,
            "default_max_tokens": self.default_max_tokens,
            "supports_vision": self.supports_vision,
            "context_lengths": {m.id: m.context_length for m in self.models if m.context_length},
            "prices": {m.id: [m.input_price, m.output_price, m.cache_read_price,
                              m.cache_write_price] for m in self.models if m.priced}}

    def profile(self) -> ProviderProfile:
        return profile_from(self.fields())


class Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    profiles: tuple[ProfileRow, ...]

    @model_validator(mode="after")
    def _unique_names(self) -> Catalogue:
        seen: dict[str, str] = {}
        for row in self.profiles:
            for name in (row.name, *row.aliases):
                if name in seen:
                    raise ValueError(f"{name!r} names both {seen[name]!r} and {row.name!r}")
                seen[name] = row.name
        return self


def read_catalogue(path: Path) -> Catalogue:
    """The validated rows of the YAML file at ``path``."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogueError(f"cannot read the provider catalogue {path}: {exc}") from exc
    return parse_catalogue(raw, path)


def parse_catalogue(raw: bytes, path: Path) -> Catalogue:
    """The validated rows of a catalogue file's bytes (``path``: named in errors)."""
    import yaml

    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster
        data = yaml.load(raw.decode("utf-8"), Loader=loader)  # noqa: S506 (a safe loader)
        return Catalogue.model_validate(data)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CatalogueError(f"cannot read the provider catalogue {path}: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(f"{_where(data, e['loc'])}: {e['msg']}" for e in exc.errors())
        raise CatalogueError(f"the provider catalogue {path} is not valid: {problems}. "
                             "Fix those rows (docs/model-providers.md lists the fields).") from None


def _where(data: Any, loc: tuple[Any, ...]) -> str:
    """``profiles[3] (groq).base_url`` for an error location."""
    parts = [str(p) for p in loc]
    if len(loc) >= 2 and loc[0] == "profiles" and isinstance(loc[1], int):
        try:
            name = data["profiles"][loc[1]].get("name", "?")
        except (KeyError, IndexError, TypeError, AttributeError):
            name = "?"
        return ".".join([f"profiles[{loc[1]}] ({name})", *parts[2:]])
    return ".".join(parts)
