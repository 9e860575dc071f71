"""Owner: the builtin plugin `models`. Provider profiles as data: a YAML table of rows
(:mod:`.rows`, pydantic models) turned into :class:`~hermes_agent.api.ProviderProfile`
objects and registered by the model-provider plugin that ships the table
(plugins/model-providers/catalogue). A new OpenAI- or Anthropic-compatible provider is one row.

A file is validated the first time its bytes are seen; the validated rows are kept in the
kernel's sealed validation cache under a hash of the bytes and of the schema's source
(docs/cache.md), so a later start builds the profiles from the cache without importing
pydantic or parsing YAML. The same rows make the catalogue table of docs/model-providers.md
and the ``optional_env`` of the plugin's plugin.yaml (:mod:`.views`); tests check both against
the data, and ``python -m hermes_agent.kits.model_catalogue`` rewrites them. Not part of the
contract docs/api.md locks (docs/kits.md).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from hermes_agent.api import ProviderProfile

CACHE_KIND = "provider-catalogue"


class CatalogueError(ValueError):
    """The catalogue file is not valid; the message names the file, the row and the fix."""


def profile_from(fields: dict[str, Any]) -> ProviderProfile:
    """A profile from a row's keyword arguments in JSON types (lists become tuples)."""
    prices = {model: tuple(price) for model, price in (fields.get("prices") or {}).items()}
    return ProviderProfile(**{**fields, "prices": prices})  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def _schema_digest() -> bytes:
    return hashlib.sha256((Path(__file__).parent / "rows.py").read_bytes()).digest()


def load_profiles(path: Path, cache: Any = None) -> list[ProviderProfile]:
    """The profiles of the catalogue file at ``path``, validated (:class:`CatalogueError`
    when it is not valid). ``cache``: the kernel's validation cache, or None."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogueError(f"cannot read the provider catalogue {path}: {exc}") from exc
    key = cache.key(CACHE_KIND, _schema_digest() + raw) if cache is not None else ""
    hit = cache.get(key) if cache is not None else None
    if isinstance(hit, list) and all(isinstance(row, dict) for row in hit):
        try:
            return [profile_from(row) for row in hit]
        except (TypeError, ValueError):
            pass  # an entry of another shape: validate again
    from .rows import parse_catalogue

    rows = [row.fields() for row in parse_catalogue(raw, path).profiles]
    if cache is not None:
        cache.put(key, rows)
    return [profile_from(row) for row in rows]


def register_catalogue(ctx: Any, path: Path) -> None:
    """Register every profile of the catalogue at ``path`` with a plugin context."""
    kernel = getattr(ctx, "kernel", None)
    for profile in load_profiles(path, getattr(kernel, "cache", None)):
        ctx.register_model_provider(profile)


def read_catalogue(path: Path) -> Any:
    """The validated rows (:class:`.rows.Catalogue`) of the file at ``path``."""
    from .rows import read_catalogue as read

    return read(path)
