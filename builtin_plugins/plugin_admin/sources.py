"""Where a plugin comes from, and fetching it into a scratch folder for validation.

Forms of SPEC:
- a local directory holding plugin.yaml (optionally ``DIR#subdirectory=sub``): ``path``;
- a local git repository, a git URL (``https://…``, ``git@…``, ``ssh://…``, ``file://…``,
  ``git+URL``, ``…/repo.git``) or GitHub shorthand ``owner/repo[/sub/dir]``; ``@ref`` before
  the fragment pins a branch, tag or commit and ``#subdirectory=sub`` (or ``#sub``) picks a
  folder: ``git``;
- a wheel, an sdist, a package folder (pyproject.toml / setup.py, no plugin.yaml) or a
  requirement such as ``hermes-plugin-foo`` or ``foo==1.2``: ``pip``, into the running
  interpreter. Building (an sdist, a package folder, a requirement without a wheel) runs the
  package's code, so it needs ``allow_build``.
Nothing here writes outside the scratch folder it is given.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path
from typing import Any

import click

from hermes_agent import MANIFEST_NAMES, Manifest, find_manifest, read_manifest

from .guards import (
    check_distribution,
    check_git,
    check_links,
    check_manifest_text,
    check_plugin_name,
    check_requirement,
)
from .lockfile import digest_files, tree_files

GROUPS = {"hermes_agent.plugins": "", "hermes_agent.memory_providers": "memory"}
_SHORTHAND = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?(@[\w./-]+)?\Z")
_GIT_URL = re.compile(r"^(git\+)?(https?://|ssh://|git://|file://|git@)")
_ARCHIVES = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz")


@dataclass
class Source:
    kind: str  # "path" | "git" | "pip"
    spec: str  # as the user wrote it
    location: str  # directory, clone URL, or pip argument
    subdirectory: str = ""
    ref: str = ""


@dataclass
class Candidate:
    """One plugin fetched and validated, not yet installed."""

    name: str
    source: Source
    manifest: Manifest
    files_digest: str
    warnings: list[str] = field(default_factory=list)
    directory: Path | None = None  # path/git: the plugin folder in the scratch area
    wheel: Path | None = None  # pip: the built wheel
    dist: str = ""
    dist_version: str = ""
    commit: str = ""
    entry_point: str = ""
    requires: list[str] = field(default_factory=list)  # pip: the wheel's Requires-Dist

    def lock_extra(self) -> dict[str, Any]:
        src = self.source
        extra: dict[str, Any] = {"subdirectory": src.subdirectory, "ref": src.ref,
                                 "commit": self.commit, "dist": self.dist,
                                 "dist_version": self.dist_version, "entry_point": self.entry_point}
        if src.kind == "git":
            extra["url"] = src.location
        return extra


def _split_fragment(spec: str) -> tuple[str, str]:
    base, _, fragment = spec.partition("#")
    if fragment.startswith("subdirectory="):
        fragment = fragment[len("subdirectory="):]
    return base, fragment.strip("/")


def classify(spec: str) -> Source:
    spec = spec.strip()
    if not spec:
        raise click.ClickException("give a plugin source: a folder, a git URL, owner/repo or a "
                                   "pip requirement")
    base, sub = _split_fragment(spec)
    local = _local_path(base)
    if local.exists():
        local = local.resolve()  # the lock records absolute paths, not the caller's cwd
        spec = str(local) + (f"#subdirectory={sub}" if sub else "")
        if local.is_file():
            if not base.endswith(_ARCHIVES):
                raise click.ClickException(f"{base} is a file but not a wheel or sdist; give the "
                                           "plugin folder (holding plugin.yaml) instead")
            return Source("pip", spec, str(local.resolve()))
        if (local / ".git").exists():
            return Source("git", spec, str(local.resolve()), sub)
        if not sub and not _has_manifest(local) and _is_package(local):
            return Source("pip", spec, str(local.resolve()))
        return Source("path", spec, str(local.resolve()), sub)
    if _looks_like_path(base):
        raise click.ClickException(
            f"{base} does not exist (looked for {local.absolute()}). Check the path (a relative "
            f"one starts from the current folder, {Path.cwd()}); a git URL, owner/repo or a pip "
            "requirement is written without a leading '.', '/' or '~'")
    if _GIT_URL.match(base) or base.endswith(".git"):
        url = base.removeprefix("git+")
        ref = ""
        at = url.rfind("@")
        if at > url.find("://") + 3 and "/" not in url[at:] and not url.startswith("git@"):
            url, ref = url[:at], url[at + 1:]
        elif url.startswith("git@") and url.count("@") > 1:
            url, _, ref = url.rpartition("@")
        return Source("git", spec, url, sub, ref)
    if _SHORTHAND.match(base) and not re.search(r"[=<>!~\[]", base):
        path, _, ref = base.partition("@")
        owner, repo, *rest = path.split("/")
        return Source("git", spec, f"https://github.com/{owner}/{repo}",
                      "/".join(filter(None, [*rest, sub])), ref)
    if "/" in base or "\\" in base:
        raise click.ClickException(f"{base} is neither an existing folder nor owner/repo; give an "
                                   "existing plugin folder, a git URL, owner/repo or a pip "
                                   "requirement")
    return Source("pip", spec, spec)


def _looks_like_path(text: str) -> bool:
    """Written as a path (``./x``, ``../x``, ``/x``, ``~/x``, ``C:\\x``): never a URL, an
    owner/repo shorthand or a requirement, whether or not it exists."""
    return text.startswith((".", "/", "~", "\\")) or Path(text).is_absolute()


def _local_path(text: str) -> Path:
    try:
        return Path(text).expanduser()
    except RuntimeError:  # ~someone without a known home
        return Path(text)


def _has_manifest(directory: Path) -> bool:
    return find_manifest(directory) is not None


def _is_package(directory: Path) -> bool:
    return (directory / "pyproject.toml").is_file() or (directory / "setup.py").is_file()


def _plugin_dir(root: Path, sub: str, spec: str) -> Path:
    target = (root / sub).resolve() if sub else root.resolve()
    if not target.is_relative_to(root.resolve()):
        raise click.ClickException(f"subdirectory {sub!r} of {spec} points outside the source")
    if not target.is_dir():
        raise click.ClickException(f"{spec}: there is no folder {sub!r} in the source")
    if not _has_manifest(target):
        hint = " (name the plugin folder with #subdirectory=PATH)" if not sub else ""
        raise click.ClickException(f"{spec}: no plugin.yaml in {target}{hint}; a plugin folder "
                                   "holds plugin.yaml and __init__.py")
    return target


def run(cmd: list[str], what: str, cwd: Path | None = None, timeout: int = 600) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never hang on a credential prompt
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired as exc:
        raise click.ClickException(f"{what} timed out after {timeout}s") from exc
    except OSError as exc:
        raise click.ClickException(f"{what} could not run: {exc}") from exc
    if proc.returncode:
        lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
        detail = "\n  ".join(lines[-6:]) or f"exit code {proc.returncode}"
        raise click.ClickException(f"{what} failed:\n  {detail}")
    return proc.stdout


def pip(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]


def git() -> str:
    found = shutil.which("git")
    if not found:
        raise click.ClickException("git is not installed (or not on PATH); install git, or install "
                                   "the plugin from a folder or with pip")
    return found


def fetch(source: Source, scratch: Path, *, allow_build: bool = False) -> list[Candidate]:
    """Fetch ``source`` into ``scratch`` and validate each plugin it holds. A pip source is
    fetched as a wheel; an sdist, a package folder or a requirement published as source only
    is built (running its setup code, before anything is shown) only with ``allow_build``."""
    if source.kind == "path":
        root = Path(source.location)
        return [_directory_candidate(source, _plugin_dir(root, source.subdirectory, source.spec),
                                     root)]
    if source.kind == "git":
        check_git(source.location, source.ref)
        clone = scratch / "clone"
        # ext:: runs a command even where a user's git config allows it; check_git refuses it too
        command = [git(), "-c", "protocol.ext.allow=never", "clone", "--quiet"]
        if not source.ref and "://" in source.location and not source.location.startswith("file:"):
            command += ["--depth", "1"]
        run([*command, source.location, str(clone)], f"git clone {source.location}")
        if source.ref:
            run([git(), "checkout", "--quiet", source.ref], f"git checkout {source.ref}", cwd=clone)
        commit = run([git(), "rev-parse", "HEAD"], "git rev-parse", cwd=clone).strip()
        candidate = _directory_candidate(source, _plugin_dir(clone, source.subdirectory,
                                                             source.spec), clone)
        candidate.commit = commit
        return [candidate]
    if not Path(source.location).is_absolute():  # a requirement, not a file or folder
        check_requirement(source.location, "the pip source")
    return _wheel_candidates(source, scratch, allow_build)


def _directory_candidate(source: Source, directory: Path, root: Path) -> Candidate:
    check_links(directory, root, source.spec)  # before any file of it is read
    manifest, warnings = validated(find_manifest(directory) or directory / MANIFEST_NAMES[0],
                                   directory.name)
    if not (directory / "__init__.py").is_file():
        raise click.ClickException(f"{directory} has no __init__.py; a directory plugin is a Python "
                                   "package with a register(ctx) function")
    return Candidate(manifest.name, source, manifest, digest_files(tree_files(directory)),
                     warnings, directory=directory)


def validated(path: Path, default_name: str) -> tuple[Manifest, list[str]]:
    result = read_manifest(path, default_name=default_name)
    if result.error is not None or result.manifest is None:
        raise click.ClickException(f"invalid manifest, nothing was installed:\n{result.error}")
    check_plugin_name(result.manifest.name, str(path))
    check_manifest_text(result.manifest, str(path))
    return result.manifest, list(result.warnings)


_BUILD_HINT = ("building a package from source runs its own setup code before hermes can show "
               "what it registers; review its source, then pass --allow-build (or install a "
               "wheel)")


def _wheel_candidates(source: Source, scratch: Path, allow_build: bool) -> list[Candidate]:
    out = scratch / "wheel"
    location = Path(source.location)
    binary_only: list[str] = []
    if not allow_build and not source.location.endswith(".whl"):
        if location.is_dir():  # classify: pyproject.toml or setup.py, and no plugin.yaml
            raise click.ClickException(
                f"{source.spec} is a Python package folder (pyproject.toml or setup.py, no "
                f"plugin.yaml at its top): {_BUILD_HINT}. A plugin folder with plugin.yaml and "
                "__init__.py at its top is copied instead, running nothing")
        if location.is_absolute():  # an sdist file
            raise click.ClickException(f"{source.spec} is a source distribution: {_BUILD_HINT}")
        binary_only = ["--only-binary=:all:"]  # a requirement: wheels only
    try:
        run(pip("wheel", "--no-deps", "-q", *binary_only, "-w", str(out), source.location),
            f"pip could not fetch or build {source.spec}")
    except click.ClickException as exc:
        if binary_only:
            exc.message += (f"\n(only wheels were looked for: if {source.spec} is published as "
                            f"source only, {_BUILD_HINT})")
        raise
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise click.ClickException(f"pip produced {len(wheels)} wheels for {source.spec}; expected one")
    wheel = wheels[0]
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), "")
        meta = Parser().parsestr(archive.read(f"{info}/METADATA").decode("utf-8"))
        dist, version = meta["Name"], meta["Version"]
        check_distribution(dist, version, meta.get_all("Requires-Dist") or [], source.spec)
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        if f"{info}/entry_points.txt" in names:
            parser.read_string(archive.read(f"{info}/entry_points.txt").decode("utf-8"))
        files = digest_files((n, archive.read(n)) for n in names if not n.endswith("/RECORD"))
        candidates = []
        for group, slot in GROUPS.items():
            if not parser.has_section(group):
                continue
            for name, value in parser.items(group):
                check_plugin_name(name, f"{source.spec}: its entry point")
                manifest, warnings = _wheel_manifest(archive, names, name, value, scratch, meta)
                check_manifest_text(manifest, f"{source.spec}: {name}")
                if slot and manifest.kind != "exclusive":
                    manifest = Manifest(**{**manifest.__dict__, "kind": "exclusive"})
                candidates.append(Candidate(name, source, manifest, files, warnings, wheel=wheel,
                                            dist=dist, dist_version=version,
                                            entry_point=f"{group}:{name} = {value}",
                                            requires=meta.get_all("Requires-Dist") or []))
    if not candidates:
        raise click.ClickException(
            f"{dist} {version} is not a hermes plugin: it declares no entry point in the "
            "hermes_agent.plugins group. Add to its pyproject.toml:\n"
            '  [project.entry-points."hermes_agent.plugins"]\n  my-plugin = "my_package"')
    return candidates


def _wheel_manifest(archive: zipfile.ZipFile, names: list[str], name: str, value: str,
                    scratch: Path, meta: Any) -> tuple[Manifest, list[str]]:
    prefix = value.split(":")[0].strip().replace(".", "/")
    member = next((m for m in (f"{prefix}/{n}" for n in MANIFEST_NAMES) if m in names), None)
    if member is None:
        return Manifest(name=name, version=meta["Version"] or "", description=meta["Summary"] or "",
                        author=meta["Author"] or meta["Author-email"] or "", synthesized=True), []
    target = scratch / "manifests" / name / Path(member).name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(archive.read(member))
    manifest, warnings = validated(target, name)
    if not manifest.version:
        manifest = Manifest(**{**manifest.__dict__, "version": meta["Version"] or ""})
    return manifest, warnings
