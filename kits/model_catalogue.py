"""Owner: the builtin plugin `models`. Provider profiles as data: a YAML table of rows,
validated with pydantic when it is read, turned into :class:`~hermes_agent.api.ProviderProfile`
objects and registered by the model-provider plugin that ships the table
(plugins/model-providers/catalogue). A new OpenAI- or Anthropic-compatible provider is one row.

The same rows make the catalogue table of docs/model-providers.md (:func:`markdown_table`)
and the ``optional_env`` list of the plugin's plugin.yaml (:func:`manifest_env`); tests check
both against the data, ``python -m hermes_agent.kits.model_catalogue`` rewrites them. Not part
of the contract docs/api.md locks (docs/kits.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hermes_agent.api import ProviderProfile
from hermes_agent.api.models import API_MODES

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

    def profile(self) -> ProviderProfile:
        return ProviderProfile(
            name=self.name, label=self.label, api_mode=self.api_mode, base_url=self.base_url,
            key_env=self.key_env, base_url_env=self.base_url_env,
            default_model=self.default_model, auxiliary_model=self.auxiliary_model,
            aliases=self.aliases, key_required=self.key_required, local=self.local,
            auto_detect=self.auto_detect, models=tuple(m.id for m in self.models),
            key_url=self.key_url, default_headers=dict(self.default_headers),
            extra_body=dict(self.extra_body), max_tokens_param=self.max_tokens_param,
            default_max_tokens=self.default_max_tokens,
            context_lengths={m.id: m.context_length for m in self.models if m.context_length},
            prices={m.id: (m.input_price, m.output_price, m.cache_read_price,
                           m.cache_write_price) for m in self.models if m.priced})


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


class CatalogueError(ValueError):
    """The catalogue file is not valid; the message names the file, the row and the fix."""


def read_catalogue(path: Path) -> Catalogue:
    """The validated rows of the YAML file at ``path``."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Catalogue.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
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


def load_profiles(path: Path) -> list[ProviderProfile]:
    return [row.profile() for row in read_catalogue(path).profiles]


def register_catalogue(ctx: Any, path: Path) -> None:
    """Register every profile of the catalogue at ``path`` with a plugin context."""
    for profile in load_profiles(path):
        ctx.register_model_provider(profile)


# -- generated views of the data -------------------------------------------------------

def _models_cell(row: ProfileRow) -> str:
    if row.default_model:
        cell = f"`{row.default_model}`"
    elif row.local:
        cell = "first served model"
    else:
        cell = "`model.default`"
    if row.auxiliary_model and row.auxiliary_model != row.default_model:
        cell += f" / `{row.auxiliary_model}`"
    return cell


def _known_cell(row: ProfileRow) -> str:
    known = []
    for model in row.models:
        facts = []
        if model.context_length:
            facts.append(f"{model.context_length // 1000}K")
        if model.priced:
            facts.append(f"${model.input_price:g}/${model.output_price:g}")
        if facts:
            known.append(f"{model.id}: {', '.join(facts)}")
    return "; ".join(known)


def markdown_table(rows: Iterable[ProfileRow]) -> str:
    """The catalogue table of docs/model-providers.md."""
    lines = ["| name | label | API mode | base URL | key variables | base-URL variable | "
             "default / auxiliary model | context, price in/out per M |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        keys = ", ".join(row.key_env) + ("" if row.key_required else " (optional)")
        lines.append("| " + " | ".join((
            row.name + (f" ({', '.join(row.aliases)})" if row.aliases else ""), row.label,
            row.api_mode, row.base_url or "`model.base_url`", keys.strip() or "(none)",
            row.base_url_env or "", _models_cell(row), _known_cell(row))) + " |")
    return "\n".join(lines) + "\n"


def manifest_env(rows: Iterable[ProfileRow]) -> list[dict[str, Any]]:
    """plugin.yaml's ``optional_env``: every key (secret) and base-URL variable, once."""
    entries: dict[str, dict[str, Any]] = {}
    for row in rows:
        for name in row.key_env:
            entries.setdefault(name, {"name": name, "description": f"{row.label} API key",
                                      "secret": True})
        if row.base_url_env:
            entries.setdefault(row.base_url_env, {
                "name": row.base_url_env, "description": f"overrides the {row.label} base URL"})
    return list(entries.values())


TABLE_START = "<!-- catalogue: generated from plugins/model-providers/catalogue/profiles.yaml -->"
TABLE_END = "<!-- end of catalogue -->"


def replace_table(doc: str, rows: Iterable[ProfileRow]) -> str:
    """``doc`` with the text between the catalogue markers replaced by the table."""
    head, start, rest = doc.partition(TABLE_START)
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise CatalogueError(f"the doc has no {TABLE_START} ... {TABLE_END} markers")
    return f"{head}{TABLE_START}\n{markdown_table(rows)}{TABLE_END}{tail}"


def _rewrite() -> None:  # python -m hermes_agent.kits.model_catalogue
    import yaml

    root = Path(__file__).resolve().parent.parent
    folder = root / "plugins" / "model-providers" / "catalogue"
    rows = read_catalogue(folder / "profiles.yaml").profiles
    doc = root / "docs" / "model-providers.md"
    doc.write_text(replace_table(doc.read_text(encoding="utf-8"), rows), encoding="utf-8")
    manifest = folder / "plugin.yaml"
    head = manifest.read_text(encoding="utf-8").split("optional_env:", 1)[0]
    manifest.write_text(head + yaml.safe_dump({"optional_env": manifest_env(rows)},
                                              sort_keys=False, width=100), encoding="utf-8")
    print(f"wrote {doc} and {manifest} ({len(rows)} profiles)")


if __name__ == "__main__":
    _rewrite()
