"""Slot keys and defaults are written once (kernel/slots.py), and a default never names a
provider that nothing installs."""

from __future__ import annotations

from pathlib import Path

from hermes_agent import SLOT_INFO, Kernel, load_config


def test_every_default_names_a_provider_a_builtin_or_bundled_plugin_registers(tmp_path: Path) -> None:
    kernel = Kernel(tmp_path, env={"HERMES_HOME": str(tmp_path)}, entry_points=False).boot()
    for slot, info in SLOT_INFO.items():
        if info.default:
            assert info.default in kernel.slots.installed(slot), (slot, info.default)


def test_config_defaults_and_validation_read_the_slot_table(tmp_path: Path) -> None:
    config = load_config(tmp_path, env={"HERMES_HOME": str(tmp_path)})
    for info in SLOT_INFO.values():
        if info.config_key:
            assert config.get(info.config_key) == info.default, info.config_key
    from hermes_agent.validation import ConfigModel

    defaults = ConfigModel().model_dump()
    for info in SLOT_INFO.values():
        if info.config_key:
            section, _, key = info.config_key.partition(".")
            if section in defaults:  # model.provider is the models plugin's section
                assert defaults[section][key] == info.default


def test_the_slot_keys_are_spelled_in_one_kernel_module() -> None:
    kernel_dir = Path(__file__).resolve().parents[1] / "kernel"
    for info in SLOT_INFO.values():
        if not info.config_key:
            continue
        spelled = [p.name for p in kernel_dir.glob("*.py")
                   if f'"{info.config_key}"' in p.read_text(encoding="utf-8")]
        assert spelled == ["slots.py"], (info.config_key, spelled)
