"""Which backend answers: the one config.yaml selects, or a clear error; never another one
unless the user listed it in ``web.fallback``. One exception, the original's: a ``web.backend``
that cannot do a capability at all (a search-only backend asked to extract) is not used for it;
the available backend that can is (``web.<capability>_backend`` is never replaced).

A name is looked up in the ``web_search`` slot (the original's names, e.g. ``brave-free``, are
aliases of ours); a name no loaded plugin registered is looked up among the web backend
plugins that did not load (missing env, not enabled, failed), so the error names the missing
key, library or the command that enables it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_agent.api import WebBackend
from hermes_agent.kits.web_backends import as_web_backend

from .failure import Failure
from .settings import WebSettings

if TYPE_CHECKING:
    from hermes_agent import Kernel

SLOT = "web_search"
VERB = {"search": "search", "extract": "extract pages"}
#: the original's backend names (Hermes Agent 0.19) -> ours, where ours is the same service
ALIASES = {"brave-free": "brave"}
#: which backend answers a capability web.backend cannot do when several available ones can:
#: extraction on this machine first, then the original's order, then the rest by name
PREFERENCE = ("local", "firecrawl", "parallel", "tavily", "exa", "searxng", "brave", "ddgs")


@dataclass(frozen=True)
class Choice:
    """The backend that answers a capability, the key that selected it, and why another
    backend than that key names answers (``""`` when it is the one named)."""

    name: str
    key: str
    note: str = ""


def canonical(kernel: Kernel, name: str) -> str:
    """``name``, or the backend it is the original's name for (unless a plugin registered a
    backend of that very name)."""
    if name in kernel.slots.providers[SLOT]:
        return name
    return ALIASES.get(name, name)


def backend_states(kernel: Kernel) -> dict[str, str]:
    """:func:`installed_backends`, a loaded backend that is unavailable with its reason."""
    states = installed_backends(kernel)
    for name, provider in kernel.slots.providers[SLOT].items():
        try:
            backend = as_web_backend(provider.obj)
            if not backend.is_available():
                states[name] = "unavailable: " + (_reason(backend) or "its key or server is "
                                                                      "not configured")
        except Exception as exc:  # a backend's bug must not break the listing
            states[name] = f"unavailable: its check raised {type(exc).__name__}: {exc}"
    return states


def installed_backends(kernel: Kernel) -> dict[str, str]:
    """Every web backend hermes knows, by name: ``"loaded"`` or why its plugin did not load."""
    found = {name: "loaded" for name in kernel.slots.installed(SLOT)}
    for status in kernel.plugins.values():
        record = status.record
        if status.state != "loaded" and _is_web_plugin(record) and record.name not in found:
            found[record.name] = status.state
    return found


def listing(kernel: Kernel) -> str:
    found = installed_backends(kernel)
    if not found:
        return "no web backend is installed"
    return "installed: " + ", ".join(n if s == "loaded" else f"{n} ({s})"
                                      for n, s in sorted(found.items()))


def how_to_choose(key: str) -> str:
    if key.startswith("--"):  # a command-line option, not a config key
        return f"`{key} NAME` (e.g. `{key} searxng`)"
    return f"`hermes config set {key} NAME` (e.g. `hermes config set {key} searxng`)"


def check_command(name: str, capability: str) -> str:
    if capability == "extract":
        return f"`hermes web extract https://example.com --backend {name}`"
    return f"`hermes web search test --backend {name}`"


def _reason(backend: WebBackend) -> str:
    try:
        return str(backend.unavailable_reason() or "").strip().rstrip(".")
    except Exception:  # an optional method's bug must not hide the real problem
        return ""


def backend_env(kernel: Kernel, name: str, backend: WebBackend) -> list[str]:
    """The environment variables the backend reads: its ``env_vars``, the original's
    setup schema, then its plugin's ``requires_env``."""
    names = list(getattr(backend, "env_vars", ()) or ())
    original = getattr(backend, "provider", None)
    schema = getattr(original, "get_setup_schema", None)
    if callable(schema):
        try:
            names += [str(v.get("key")) for v in schema().get("env_vars") or [] if v.get("key")]
        except Exception:  # a provider's schema must not hide the real problem
            pass
    owner = kernel.slots.owner(SLOT, name)
    status = kernel.plugins.get(owner) if owner else None
    if status is not None and status.record.manifest is not None:
        names += [req.name for req in status.record.manifest.requires_env]
    return list(dict.fromkeys(names))


def _unavailable(kernel: Kernel, name: str, key: str, capability: str, reason: str) -> Failure:
    kind = "missing_dependency" if "pip install" in reason else "missing_key"
    state = "available" if kind == "missing_dependency" else "configured"
    return Failure(f"web backend {name!r} ({key}) is not {state}: {reason}. Then check it "
                   f"with {check_command(name, capability)}; or choose another backend with "
                   f"{how_to_choose(key)} ({listing(kernel)}).", kind, backend=name)


def _missing_key(kernel: Kernel, name: str, key: str, capability: str,
                 env_names: list[str]) -> Failure:
    unset = [n for n in env_names if not kernel.env.get(n)]
    if unset:
        what = f"{', '.join(unset)} {'is' if len(unset) == 1 else 'are'} not set"
        fix = (f"Set {'it' if len(unset) == 1 else 'them'} in the environment or in "
               f"{kernel.home / '.env'}")
    else:  # set, yet the backend says it is not configured: a value it does not accept
        what = (f"it reports itself unavailable although {', '.join(env_names)} "
                f"{'is' if len(env_names) == 1 else 'are'} set" if env_names
                else "its key or server is not configured")
        fix = "Check its settings and keys (docs/web.md)"
    return Failure(f"web backend {name!r} ({key}) is not configured: {what}. {fix}, then "
                   f"check with {check_command(name, capability)}; or choose another "
                   f"backend with {how_to_choose(key)} ({listing(kernel)}).", "missing_key",
                   backend=name)


def _is_web_plugin(record: Any) -> bool:
    return record.category == "web" or record.kind == "backend" or record.slot == SLOT


def _not_loaded(kernel: Kernel, name: str, key: str, capability: str) -> Failure:
    """Why the web backend plugin that would provide ``name`` did not load (``local`` is
    provided by ``web-local``: a bundled web plugin may be called ``web-<backend>``)."""
    names = {name, f"web-{name}"}
    for status in kernel.plugins.values():
        record = status.record
        if (status.state == "loaded" or not _is_web_plugin(record)
                or not names & {record.name, *record.aliases}):
            continue
        if status.code == "missing_env" and record.manifest is not None:
            return _missing_key(kernel, name, key, capability,
                                [r.name for r in record.manifest.requires_env])
        return Failure(f"web backend {name!r} ({key}) is installed but not loaded: "
                       f"{status.reason or status.state}.", "not_loaded", backend=name)
    return Failure(f"web backend {name!r} ({key}) is not installed; {listing(kernel)}. "
                   f"Choose one with {how_to_choose(key)}, or install the plugin that "
                   f"provides {name!r}.", "unknown_backend", backend=name)


def _provider(kernel: Kernel, name: str) -> Any:
    """The loaded provider called ``name`` (after :func:`canonical`), or the one backend of
    the plugin called ``name``; ``None`` when there is none."""
    providers = kernel.slots.providers[SLOT]
    provider = providers.get(canonical(kernel, name))
    if provider is None:
        owned = [p for p in providers.values() if p.plugin == name]
        provider = owned[0] if len(owned) == 1 else None
    return provider


def _can(backend: WebBackend, capability: str) -> bool:
    return bool(backend.supports_search() if capability == "search"
                else backend.supports_extract())


def _able(kernel: Kernel, capability: str) -> list[str]:
    """The loaded, available backends that can do ``capability``, most preferred first."""
    able = []
    for name, provider in kernel.slots.providers[SLOT].items():
        try:
            backend = as_web_backend(provider.obj)
            if _can(backend, capability) and backend.is_available():
                able.append(name)
        except Exception:  # a backend's broken check: not chosen in the user's place
            continue
    rank = {name: i for i, name in enumerate(PREFERENCE)}
    return sorted(able, key=lambda n: (rank.get(n, len(rank)), n))


def resolve(kernel: Kernel, settings: WebSettings, capability: str) -> Choice:
    """The backend for ``capability``: ``web.<capability>_backend``, else ``web.backend``; a
    ``web.backend`` that is loaded but cannot do ``capability`` gives way to the first of
    :func:`_able`. A :class:`Failure` when nothing is selected, or nothing can stand in."""
    name, key = settings.selection(capability)
    if not name:
        raise Failure(f"no web backend is selected for web_{capability}. Choose one with "
                      f"`hermes config set web.backend NAME` (e.g. `hermes config set web.backend"
                      f" searxng`; web.{capability}_backend selects one for {capability} only); "
                      f"{listing(kernel)}. docs/web.md compares them.", "not_configured")
    provider = _provider(kernel, name) if key == "web.backend" else None
    try:
        incapable = provider is not None and not _can(as_web_backend(provider.obj), capability)
    except Exception:  # its own check is broken: find_backend reports it as selected
        incapable = False
    if not incapable:
        return Choice(name, key)
    able = _able(kernel, capability)
    if not able:
        raise Failure(f"web backend {name!r} (web.backend) cannot {VERB[capability]}, and no "
                      f"other available backend can; set web.{capability}_backend to one that "
                      f"can ({listing(kernel)}).", "unsupported", backend=name)
    which = "the available backend" if len(able) == 1 else (
        f"the first of the available backends that can ({', '.join(able)})")
    return Choice(able[0], key, f"web.backend {name!r} cannot {VERB[capability]}: "
                                f"{which}; web.{capability}_backend chooses another")


def find_backend(kernel: Kernel, name: str, key: str, capability: str) -> WebBackend:
    """The backend called ``name`` (or the one ``name`` is an alias of), ready for
    ``capability``, or a :class:`Failure`."""
    name = canonical(kernel, name)
    provider = _provider(kernel, name)
    if provider is None:
        raise _not_loaded(kernel, name, key, capability)
    backend = as_web_backend(provider.obj)
    try:
        available = backend.is_available()
    except Exception as exc:
        raise Failure(f"web backend {name!r}: its availability check raised "
                      f"{type(exc).__name__}: {exc}", "backend_error", backend=name) from exc
    if not available:
        reason = _reason(backend)
        if reason:
            raise _unavailable(kernel, provider.name, key, capability, reason)
        raise _missing_key(kernel, provider.name, key, capability,
                           backend_env(kernel, provider.name, backend))
    if not _can(backend, capability):
        raise Failure(f"web backend {name!r} ({key}) cannot {VERB[capability]}; set "
                      f"web.{capability}_backend to one that can ({listing(kernel)}).",
                      "unsupported", backend=name)
    return backend


def candidates(kernel: Kernel, settings: WebSettings, capability: str) -> tuple[str, str, list[str]]:
    """``(the name :func:`resolve` chose, the key that selected it, web.fallback names)``; a
    :class:`Failure` when nothing is selected."""
    choice = resolve(kernel, settings, capability)
    return choice.name, choice.key, settings.fallbacks(choice.name)
