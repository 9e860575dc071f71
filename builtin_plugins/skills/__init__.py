"""Builtin plugin: skills, the agent's reusable procedures.

A skill is a folder ``$HERMES_HOME/skills/<category>/<name>/`` holding a SKILL.md (YAML
frontmatter, then instructions) and optional reference files (:mod:`.schema`,
:mod:`.catalog`). The ``skills_index`` prompt layer lists the skills that fit the session
(:mod:`.index`); ``skills_list``, ``skill_view`` and ``skill_manage`` disclose and change them
(:mod:`.tools`). Skills that plugins ship with ``ctx.register_skill`` (this plugin's bundled
ones included) are installed into the folder without overwriting a user's edits
(:mod:`.shipped`); ``hermes skills`` installs more (:mod:`.installer`, :mod:`.cli`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import INJECTION_SCAN, LayerRequest, prompt_layers, tool_error

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

    from .catalog import Catalog
    from .shipped import SyncReport

log = logging.getLogger("hermes_agent.skills")

BUNDLED = Path(__file__).parent / "bundled"
TOOLS = ("skills_list", "skill_view", "skill_manage")


class ScanUnavailable(RuntimeError):
    pass


class Skills:
    """The tools and the index layer, bound to one kernel."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel

    def sync(self, home: Path | None = None) -> "SyncReport":
        """Install the plugins' skills that are new or changed (see :mod:`.shipped`)."""
        from .shipped import sync_shipped

        return sync_shipped(Path(home or self.kernel.home), self.kernel.registered("skill").values())

    def catalog(self, home: Path | None = None) -> "Catalog":
        """The installed skills, the plugins' skills synced first."""
        from .catalog import load_catalog

        self.sync(home)
        return load_catalog(Path(home or self.kernel.home))

    def scanner(self) -> Callable[[str], list[str]] | None:
        """The agent plugin's injection scan (None while that plugin is not loaded)."""
        try:
            return self.kernel.service(INJECTION_SCAN).scan
        except Exception:
            return None

    def scan(self, text: str) -> list[str]:
        """Findings for ``text``; refuses (ScanUnavailable) rather than pass text unchecked."""
        scan = self.scanner()
        if scan is None:
            raise ScanUnavailable(
                "the injection scan that checks skills (the agent plugin's injection_scan "
                "service) is unavailable; enable the agent plugin (hermes plugins enable "
                "agent)")
        return list(scan(text))

    def toolset_tools(self, name: str) -> set[str]:
        tools, _ = self.kernel.tools.resolve_toolsets([name])
        return set(tools)

    def index(self, request: LayerRequest) -> str | None:
        from .index import fitting, render

        if "skill_view" not in request.tool_names:
            return None  # the model could not load a skill it is shown
        disabled = self.kernel.config.get("skills.disabled") or []
        chosen = fitting(self.catalog(request.home), self.kernel.env, request.tool_names,
                         self.toolset_tools, disabled, self.scanner(), log)
        return render(chosen) or None

    def handle(self, tool: str, args: dict[str, Any]) -> str:
        from . import tools

        catalog = self.catalog()
        if tool == "skills_list":
            return tools.skills_list(catalog, self.kernel.env, args)
        if tool == "skill_view":
            return tools.skill_view(catalog, self.kernel.env, self._plugin_name(args),
                                    self.scanner())
        try:
            return tools.skill_manage(Path(self.kernel.home), catalog, self.scan, args,
                                      self._limit())
        except ScanUnavailable as exc:
            return tool_error(f"Nothing was written: {exc}.")

    def _limit(self) -> int:
        """``skills.max_skill_bytes`` (validated by the config loader)."""
        from .config_schema import SkillsSection

        try:
            return int(self.kernel.config.get("skills.max_skill_bytes")
                       or SkillsSection().max_skill_bytes)
        except (TypeError, ValueError):
            return SkillsSection().max_skill_bytes

    def _plugin_name(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with a plugin skill's ``<plugin>:<name>`` replaced by its installed name."""
        from .placement import Manifest

        asked = args.get("name")
        if not isinstance(asked, str) or ":" not in asked:
            return args
        for name, entry in Manifest(Path(self.kernel.home)).entries.items():
            if entry.source == f"plugin:{asked.strip()}":
                return {**args, "name": name}
        return args

    def handler(self, tool: str) -> Callable[..., str]:
        def run(args: dict[str, Any], **_: Any) -> str:
            return self.handle(tool, args)
        run.__name__ = tool
        return run


def register(ctx: "PluginContext") -> None:
    from .tool_schemas import SKILL_MANAGE, SKILL_VIEW, SKILLS_LIST

    skills = Skills(ctx.kernel)
    prompt_layers(ctx.kernel).add("skills_index", skills.index, plugin=ctx.plugin_name)
    for schema, emoji in ((SKILLS_LIST, "📚"), (SKILL_VIEW, "📖"), (SKILL_MANAGE, "🛠")):
        ctx.register_tool(name=schema["name"], toolset="skills", schema=schema,
                          handler=skills.handler(schema["name"]),
                          description=schema["description"], emoji=emoji)
    for folder in sorted(BUNDLED.iterdir()):
        if (folder / "SKILL.md").is_file():
            ctx.register_skill(folder.name, folder)


@hookimpl
def register_toolsets(register: Any) -> None:
    register("skills", tools=TOOLS, kind="leaf",
             description="Reusable procedures: list, load and save skills")
