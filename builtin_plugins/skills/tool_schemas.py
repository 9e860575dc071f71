"""Function schemas of the skills tools (byte-stable: part of every cached prefix)."""

from __future__ import annotations

from typing import Any

SKILLS_LIST: dict[str, Any] = {
    "name": "skills_list",
    "description": (
        "List the installed skills (reusable procedures): name, category and description of "
        "each. Load one with skill_view(name) before following it."),
    "parameters": {
        "type": "object",
        "properties": {
            "category": {"type": "string", "description": "Only skills of this category"},
        },
    },
}

SKILL_VIEW: dict[str, Any] = {
    "name": "skill_view",
    "description": (
        "Load a skill: with only `name`, its instructions (SKILL.md) and the list of its "
        "other files; with `path` too, one of those files (e.g. references/api.md)."),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name"},
            "path": {"type": "string",
                     "description": "A file inside the skill's folder, relative to it"},
        },
        "required": ["name"],
    },
}

SKILL_MANAGE: dict[str, Any] = {
    "name": "skill_manage",
    "description": (
        "Create, edit, patch or delete a skill in the user's skills folder. A skill is a "
        "SKILL.md: YAML frontmatter (name, description; optional version, platforms, "
        "prerequisites, metadata.hermes.tags, ...) between '---' lines, then markdown "
        "instructions. action='create' writes `content` as a new skill (in `category`); "
        "'edit' replaces an existing skill's SKILL.md with `content`; 'patch' replaces "
        "`old_string` (occurring exactly once) with `new_string`; 'delete' removes the skill. "
        "Save a skill after a difficult task whose procedure will be needed again."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["create", "edit", "patch", "delete"]},
            "name": {"type": "string", "description": "The skill's name (kebab-case)"},
            "content": {"type": "string",
                        "description": "The whole SKILL.md, frontmatter included (create, "
                                       "edit)"},
            "category": {"type": "string",
                         "description": "Folder to create the skill in, e.g. devops "
                                        "(create; default: the frontmatter's, else general)"},
            "old_string": {"type": "string", "description": "Text to replace (patch)"},
            "new_string": {"type": "string", "description": "Replacement text (patch)"},
        },
        "required": ["action", "name"],
    },
}
