"""Dependencies only a removed distribution needed, from installed packages' metadata.

A distribution's requirements are walked (with their environment markers and extras, via
``packaging``) to every installed distribution it pulls in. One of those is an orphan when
no installed distribution outside the removed one and the other orphans requires it. pip's
own tooling, hermes and what hermes needs are never offered.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import Distribution, distributions

from .pipdeps import HOST_DIST, normalize_dist, own_distribution

# Installer tooling: a plugin may list it, but removing the plugin must not take it away.
_TOOLING = frozenset({"pip", "setuptools", "wheel", "packaging"})
_Edge = tuple[str, frozenset[str]]  # (distribution, extras asked for)


def _requirements(dist: Distribution, extras: Iterable[str] = ()) -> set[_Edge]:
    """What ``dist`` requires in this environment (with ``extras``, also their requirements)."""
    from packaging.markers import UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    environments = [{"extra": extra} for extra in (*extras, "")]
    found: set[_Edge] = set()
    for text in dist.requires or []:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        try:
            applies = requirement.marker is None or any(
                requirement.marker.evaluate(env) for env in environments)
        except UndefinedEnvironmentName:
            applies = False
        if applies:
            found.add((normalize_dist(requirement.name), frozenset(requirement.extras)))
    return found


def installed_distributions() -> dict[str, Distribution]:
    """Installed distributions by normalised name (the first one on sys.path wins)."""
    found: dict[str, Distribution] = {}
    for dist in distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            found.setdefault(normalize_dist(name), dist)
    return found


def requirement_graph(installed: dict[str, Distribution]) -> dict[str, set[str]]:
    """Each installed distribution -> the installed distributions it requires."""
    graph: dict[str, set[str]] = {}
    for name, dist in installed.items():
        needs: set[str] = set()
        for dep, extras in _requirements(dist):
            if dep in installed:
                needs.add(dep)
                if extras:  # `dep[extra]` also pulls in what that extra of dep requires
                    needs |= {d for d, _ in _requirements(installed[dep], extras) if d in installed}
        graph[name] = needs - {name}
    return graph


def orphaned_dependencies(removed: Iterable[str]) -> list[str]:
    """Installed distributions that only the ``removed`` distributions need, sorted by name."""
    installed = installed_distributions()
    graph = requirement_graph(installed)
    roots = {normalize_dist(name) for name in removed} & set(graph)
    reachable: set[str] = set()
    stack = list(roots)
    while stack:
        for dep in graph[stack.pop()]:
            if dep not in reachable:
                reachable.add(dep)
                stack.append(dep)
    protected = {*_TOOLING, HOST_DIST, normalize_dist(own_distribution())}
    candidates = reachable - roots - protected
    changed = True
    while changed:  # a candidate something else still needs is kept, and so is what it needs
        changed = False
        for name in sorted(candidates):
            users = {user for user, needs in graph.items() if name in needs}
            if users - candidates - roots:
                candidates.discard(name)
                changed = True
    return sorted(installed[name].metadata["Name"] for name in candidates)
