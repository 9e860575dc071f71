"""Credentials inside URLs never reach the screen or the logs: the masking function, the
logging filter, and `hermes config show` / `hermes model` run through the real CLI."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from hermes_agent.kits.secrets import (SecretMaskingFilter, install_log_masking, mask_secrets,
                                       mask_url)
from hermes_agent.cli.root import main

PASSWORD = "hunter2-Pa55"


@pytest.mark.parametrize("url, shown", [
    (f"https://alice:{PASSWORD}@llm.example.com/v1", "https://alice:***@llm.example.com/v1"),
    (f"http://alice:{PASSWORD}@127.0.0.1:8080/v1", "http://alice:***@127.0.0.1:8080/v1"),
    ("https://host/v1?api_key=sk-1&model=x", "https://host/v1?api_key=***&model=x"),
    ("https://host/v1?token=t0k&key=k3y&access_token=a&X-Amz-Signature=s&sig=g",
     "https://host/v1?token=***&key=***&access_token=***&X-Amz-Signature=***&sig=***"),
    ("https://host/cb#access_token=abc&state=1", "https://host/cb#access_token=***&state=1"),
    ("https://ghp_0123456789abcdefghij@github.com/o/r.git", "https://***@github.com/o/r.git"),
    ("ssh://git@github.com/o/r.git", "ssh://git@github.com/o/r.git"),  # a user name alone
    (f"http://user:{PASSWORD}@[::1]:99999/v1", "http://***@[::1]:99999/v1"),  # bad port
    ("https://api.openai.com/v1", "https://api.openai.com/v1"),
    ("https://host/v1?monkey=1&keyboard=2", "https://host/v1?monkey=1&keyboard=2"),
    ("", ""), ("not a url", "not a url"),
])
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_mask_secrets_finds_every_url_in_a_text() -> None:
    text = (f"cannot reach http://bob:{PASSWORD}@10.0.0.1:3128; proxy "
            f"'https://u:{PASSWORD}@proxy:8443' and https://h/x?apikey=abc.")
    masked = mask_secrets(text)
    assert PASSWORD not in masked and "abc" not in masked
    assert "http://bob:***@10.0.0.1:3128" in masked and "proxy:8443" in masked


def test_mask_secrets_masks_a_query_quoted_without_its_url() -> None:
    text = "HTTP 404: no route /v1/?api_key=qk-123chat/completions&model=m (see a=b?c)"
    assert mask_secrets(text) == "HTTP 404: no route /v1/?api_key=***&model=m (see a=b?c)"


def test_a_log_record_is_masked_by_the_filter_on_the_handlers() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        install_log_masking()
        install_log_masking()  # idempotent
        assert sum(isinstance(f, SecretMaskingFilter) for f in handler.filters) == 1
        assert any(isinstance(f, SecretMaskingFilter) for f in logging.lastResort.filters)
        logging.getLogger("hermes_agent.models").warning(
            "provider %s failed at %s", "custom", f"http://alice:{PASSWORD}@127.0.0.1:9/v1")
    finally:
        root.removeHandler(handler)
    assert stream.getvalue() == "provider custom failed at http://alice:***@127.0.0.1:9/v1\n"


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    for name in ("HERMES_RAISE_ERRORS", "HERMES_SAFE_MODE", "HERMES_INFERENCE_PROVIDER",
                 "HERMES_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config.yaml").write_text(
        "model:\n  provider: custom\n  default: m1\n"
        f"  base_url: https://alice:{PASSWORD}@llm.example.com/v1?api_key=qk-777\n"
        "auxiliary:\n  vision:\n"
        f"    base_url: http://bob:{PASSWORD}@10.1.1.1:8000/v1?token=tk-888\n")
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("args", [("config", "show"), ("config", "show", "--json"),
                                  ("model",), ("model", "--json")])
def test_cli_output_masks_the_base_url(cli_home: Path, capsys: pytest.CaptureFixture[str],
                                       args: tuple[str, ...]) -> None:
    code, output = _run(capsys, *args)
    assert code == 0, output
    for secret in (PASSWORD, "qk-777", "tk-888"):
        assert secret not in output
    assert "https://alice:***@llm.example.com/v1?api_key=***" in output


def test_config_get_and_set_mask_too(cli_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, output = _run(capsys, "config", "get", "model.base_url")
    assert code == 0 and output.strip() == "https://alice:***@llm.example.com/v1?api_key=***"
    code, output = _run(capsys, "config", "get", "model")
    assert code == 0 and PASSWORD not in output and "qk-777" not in output
    code, output = _run(capsys, "config", "set", "model.api_key", "sk-typed-in")
    assert code == 0 and "sk-typed-in" not in output and "***" in output
    code, output = _run(capsys, "config", "get", "model.api_key", "--show-secrets")
    assert output.strip() == "sk-typed-in"


def test_config_show_secrets_flag_shows_them(cli_home: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["config", "show", "--json", "--show-secrets"]) == 0
    assert PASSWORD in json.loads(capsys.readouterr().out)["model"]["base_url"]


def test_doctor_masks_a_url_in_a_plugins_failure(cli_home: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_agent.testing import write_plugin

    write_plugin(cli_home / "plugins", "mirror", f"""
        raise ConnectionError("cannot fetch https://deploy:{PASSWORD}@mirror.example.com/idx")
    """)
    assert _run(capsys, "config", "set", "plugins.enabled", "[mirror]")[0] == 0
    _, output = _run(capsys, "plugins", "doctor", "--load", "mirror")
    assert "https://deploy:***@mirror.example.com/idx" in output, output
    assert PASSWORD not in output


def test_cli_errors_mask_urls(cli_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failed `git clone` of a URL holding a token: the error that reaches the screen."""
    code, output = _run(capsys, "plugins", "install",
                        f"https://x-token:{PASSWORD}@127.0.0.1:9/repo.git", "--no-input")
    assert code != 0 and "x-token:***@127.0.0.1:9" in output, output
    assert PASSWORD not in output
