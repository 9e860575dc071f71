"""Slot keys and defaults are declared once, by the builtin plugin owning each slot
(``slots:`` in its plugin.yaml), and a default never names a provider that nothing installs."""

from __future__ import annotations

from pathlib import Path

import yaml

from hermes_agent import Kernel, load_config

ROOT = Path(__file__).resolve().parents[1]


def test_every_default_names_a_provider_a_builtin_or_bundled_plugin_registers(tmp_path: Path) -> None:
    kernel = Kernel(tmp_path, env={"HERMES_HOME": str(tmp_path)}, entry_points=False).boot()
    assert set(kernel.slots.info) == {"memory", "context_engine", "model_provider", "web_search",
                                      "platform", "session_store", "browser", "tts", "stt",
                                      "image_gen"}
    for slot, info in kernel.config.slots.items():
        if info.default:
            assert info.default in kernel.slots.installed(slot), (slot, info.default)


def test_config_defaults_and_validation_read_the_slot_table(tmp_path: Path) -> None:
    config = load_config(tmp_path, env={"HERMES_HOME": str(tmp_path)})
    assert config.slots
    for info in config.slots.values():
        if info.config_key:
            assert config.get(info.config_key) == info.default, info.config_key
    from hermes_agent.config import builtin_declarations
    from hermes_agent.slots import slot_defaults
    from hermes_agent.validation import config_model

    declared = builtin_declarations()
    defaults = config_model(declared.sections, slot_defaults(declared.slots),
                            declared.owners)().model_dump()
    for info in declared.slots.values():
        if info.config_key:
            section, _, key = info.config_key.partition(".")
            if isinstance(defaults[section], dict):  # model: the models plugin's own key
                assert defaults[section][key] == info.default


def test_the_slot_keys_are_spelled_by_the_plugin_declaring_the_slot_not_the_kernel() -> None:
    config = load_config(ROOT / "no-such-home", env={})
    kernel_dir = ROOT / "kernel"
    for slot, info in config.slots.items():
        declaring = [p.parent.name for p in sorted((ROOT / "builtin_plugins").glob("*/plugin.yaml"))
                     if slot in (yaml.safe_load(p.read_text(encoding="utf-8")).get("slots") or {})]
        assert len(declaring) == 1, (slot, declaring)
        if not info.config_key:
            continue
        spelled = [p.name for p in kernel_dir.glob("*.py")
                   if f'"{info.config_key}"' in p.read_text(encoding="utf-8")]
        assert spelled == [], (info.config_key, spelled)
