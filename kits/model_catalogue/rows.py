"""Owner: the builtin plugin `models`. The rows of a provider catalogue file as pydantic
models, validated when a file is read for the first time (its result is cached: see the
package's docstring)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Literal, get_type_hints

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, create_model,
                      field_validator, model_validator)

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


# Row fields that are not ProviderProfile's own, or that a row states its own way.
ROW_ONLY: dict[str, Any] = {"description": (str, "")}
RESTATED: dict[str, Any] = {
    "name": (str, Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")),
    "label": (str, Field(min_length=1)),
    "api_mode": (ApiMode, "chat_completions"),
    "models": (tuple[ModelRow, ...], ()),  # ids, or ids with what is published
    "default_headers": (dict[str, str], Field(default_factory=dict)),
    "extra_body": (dict[str, Any], Field(default_factory=dict)),
    "max_tokens_param": (Literal["max_tokens", "max_completion_tokens"], "max_tokens"),
    "default_max_tokens": (int | None, Field(default=None, gt=0)),
}
NOT_IN_ROWS = ("transport", "context_lengths", "prices")  # code, or made from ``models``


class _RowRules(BaseModel):
    """What every row must satisfy; :data:`ProfileRow` adds ProviderProfile's fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("models", mode="before", check_fields=False)
    @classmethod
    def _model_ids(cls, value: Any) -> Any:
        """A bare id is a model with nothing else known."""
        if isinstance(value, list | tuple):
            return [{"id": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("key_env", "aliases", mode="before", check_fields=False)
    @classmethod
    def _one_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("key_env", check_fields=False)
    @classmethod
    def _env_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [name for name in value if not re.match(ENV_NAME, name)]
        if bad:
            raise ValueError(f"not environment variable names: {', '.join(bad)}")
        return value

    @field_validator("base_url", check_fields=False)
    @classmethod
    def _url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url {value!r} must start with http:// or https://")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _consistent(self) -> Any:
        row: Any = self
        if row.base_url_env and not re.match(ENV_NAME, row.base_url_env):
            raise ValueError(f"base_url_env {row.base_url_env!r} is not a variable name")
        if row.key_required and not row.key_env:
            raise ValueError("a provider that needs a key names its variables (key_env), "
                             "or sets key_required: false")
        return self

    def fields(self) -> dict[str, Any]:
        """The row as ProviderProfile keyword arguments, in JSON types (what is cached)."""
        models: tuple[ModelRow, ...] = getattr(self, "models")
        data = self.model_dump(mode="json", exclude={"models", *ROW_ONLY})
        data["models"] = [m.id for m in models]
        data["context_lengths"] = {m.id: m.context_length for m in models if m.context_length}
        data["prices"] = {m.id: [m.input_price, m.output_price, m.cache_read_price,
                                 m.cache_write_price] for m in models if m.priced}
        return data

    def profile(self) -> ProviderProfile:
        return profile_from(self.fields())


def _profile_fields() -> dict[str, Any]:
    """ProviderProfile's fields as pydantic field definitions (restated ones as above), so a
    field added to the profile is a field of every row without a change here."""
    hints = get_type_hints(ProviderProfile)
    fields: dict[str, Any] = {}
    for spec in dataclasses.fields(ProviderProfile):
        if spec.name in NOT_IN_ROWS:
            continue
        if spec.name in RESTATED:
            fields[spec.name] = RESTATED[spec.name]
        elif spec.default_factory is not dataclasses.MISSING:
            fields[spec.name] = (hints[spec.name], Field(default_factory=spec.default_factory))
        elif spec.default is not dataclasses.MISSING:
            fields[spec.name] = (hints[spec.name], spec.default)
        else:
            fields[spec.name] = (hints[spec.name], ...)
    return {**ROW_ONLY, **fields}


# One provider of the catalogue: ProviderProfile's fields, as data.
ProfileRow: type[_RowRules] = create_model("ProfileRow", __base__=_RowRules, **_profile_fields())


class Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    profiles: tuple[ProfileRow, ...]  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_names(self) -> Catalogue:
        seen: dict[str, str] = {}
        rows: tuple[Any, ...] = self.profiles
        for row in rows:
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
