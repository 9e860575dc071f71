""".gitignore matching for search_files: a small, dependency-free implementation of git's rules.

Supported: comments, blank lines, ``!`` negation (the last matching rule wins), trailing ``/``
(directories only), anchoring (a ``/`` at the start or in the middle ties the pattern to the
directory of its .gitignore), ``*``, ``?``, ``[...]``, ``**`` and backslash escapes. Like git,
a file inside an ignored directory cannot be re-included (the walker never enters it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Rule:
    base: str  # directory of the .gitignore, relative to the walk root ("" = root), "/"-joined
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _translate(glob: str) -> str:
    """A gitignore glob (no leading/trailing slash handling) as a regex over a relative path."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                before_ok = i == 0 or glob[i - 1] == "/"
                after = glob[i + 2:i + 3]
                if before_ok and after == "/":  # "**/": zero or more directories
                    out.append(r"(?:.*/)?")
                    i += 3
                    continue
                if before_ok and i + 2 == n:  # trailing "/**": everything inside
                    out.append(r".*")
                    i += 2
                    continue
            out.append(r"[^/]*")
        elif c == "?":
            out.append(r"[^/]")
        elif c == "[":
            end = glob.find("]", i + 2 if glob[i + 1:i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                body = body.replace(chr(92), chr(92) * 2).replace("[", chr(92) + "[")
                out.append(f"[{body}]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_line(line: str, base: str) -> Rule | None:
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip(" ")
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _translate(line)
    pattern = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
    try:
        return Rule(base, re.compile(pattern, re.DOTALL), negate, dir_only)
    except re.error:  # a bracket git would not match either ("[z-a]"): the line matches nothing
        return None


def parse(text: str, base: str) -> list[Rule]:
    return [rule for line in text.splitlines() if (rule := parse_line(line, base)) is not None]


@dataclass
class IgnoreRules:
    """Rules in the order git applies them: outer .gitignore files first, then inner ones."""

    rules: list[Rule] = field(default_factory=list)

    def extended(self, directory: Path, rel: str) -> "IgnoreRules":
        """These rules plus the .gitignore in ``directory`` (relative path ``rel``), if any."""
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return self
        added = parse(text, rel)
        return IgnoreRules([*self.rules, *added]) if added else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not rel.startswith(rule.base + "/"):
                    continue
                subject = rel[len(rule.base) + 1:]
            else:
                subject = rel
            if rule.regex.match(subject):
                verdict = not rule.negate
        return verdict


def git_root(start: Path) -> Path | None:
    """The nearest ancestor (or ``start`` itself) that holds a ``.git`` entry."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def rules_for(root: Path) -> tuple[IgnoreRules, str]:
    """Rules from the .gitignore files between the repository root and ``root`` (exclusive of
    ``root``'s own file, which the walker reads), and ``root``'s path relative to the repo."""
    repo = git_root(root)
    if repo is None or repo == root:
        return IgnoreRules(), ""
    rules = IgnoreRules()
    rel_root = root.relative_to(repo).as_posix()
    parts = rel_root.split("/")
    for depth in range(len(parts)):
        rel = "/".join(parts[:depth])
        rules = rules.extended(repo / rel if rel else repo, rel)
    return rules, rel_root
