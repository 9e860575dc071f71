"""The gateway's config.yaml sections: ``platforms`` (each platform's own keys pass through
untouched, with no unknown-key warnings) and ``gateway`` (typed; bad values refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent import ConfigError
from hermes_agent.builtin_plugins.gateway.config_schema import GatewaySection
from hermes_agent.testing import make_kernel


def test_platform_sections_pass_through_without_warnings(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path, builtins=True, config={
        "platforms": {"discord": {"enabled": True, "allowed_guilds": [123],
                                  "api_base": "http://127.0.0.1:1/api"}},
        "gateway": {"session_hygiene": 0.9}})
    assert kernel.config.get("platforms.discord") == {
        "enabled": True, "allowed_guilds": [123], "api_base": "http://127.0.0.1:1/api"}
    assert kernel.config.get("gateway.session_hygiene") == 0.9
    assert kernel.config.get("gateway.max_concurrent_turns") == 256
    assert kernel.config.startup_warnings == []


def test_a_bad_gateway_value_is_refused_with_its_place(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"gateway\.session_hygiene: Input should be less"):
        make_kernel(tmp_path, builtins=True, config={"gateway": {"session_hygiene": 3}})


def test_every_gateway_key_is_documented() -> None:
    text = (Path(__file__).parents[2] / "docs" / "gateway.md").read_text()
    for key in GatewaySection.model_fields:
        assert f"gateway.{key}" in text, key
