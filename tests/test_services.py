"""Services: how one plugin offers a capability to the others without being imported."""

from __future__ import annotations

import pytest

from hermes_agent import HermesError
from hermes_agent.testing import make_kernel


class Greeter:
    def __init__(self, kernel):
        self.kernel = kernel
        self.closed = False

    def greet(self, who: str) -> str:
        return f"hello {who}"

    def close(self) -> None:
        self.closed = True


def offers_greeter(ctx):
    ctx.register_service("greeter", Greeter)


def test_a_service_is_built_once_per_kernel_with_the_kernel(tmp_path) -> None:
    kernel = make_kernel(tmp_path, plugins=[offers_greeter])
    first = kernel.service("greeter")
    assert first.greet("you") == "hello you"
    assert first.kernel is kernel
    assert kernel.service("greeter") is first
    assert kernel.service_owner("greeter") == "offers_greeter"


def test_a_missing_service_names_the_fix(tmp_path) -> None:
    kernel = make_kernel(tmp_path)
    with pytest.raises(HermesError, match="no plugin offers the service 'greeter'.*plugins list"):
        kernel.service("greeter")
    with pytest.raises(LookupError):
        kernel.service("greeter")


def test_two_plugins_offering_one_service_fail_the_later(tmp_path) -> None:
    def offers_greeter_too(ctx):
        ctx.register_tool("greet_tool", "misc", {"name": "greet_tool", "parameters": {}},
                          lambda args, **kw: "{}")
        ctx.register_service("greeter", Greeter)

    kernel = make_kernel(tmp_path, plugins=[offers_greeter])
    status = kernel.register_plugin(offers_greeter_too)
    assert status.state == "failed"
    assert "greeter" in status.reason and "offers_greeter" in status.reason
    assert "greet_tool" not in kernel.tools.tools  # transactional: nothing else registered
    assert kernel.service_owner("greeter") == "offers_greeter"


def test_unregistering_the_offering_plugin_closes_and_removes_its_service(tmp_path) -> None:
    kernel = make_kernel(tmp_path, plugins=[offers_greeter])
    greeter = kernel.service("greeter")
    kernel.unregister_plugin("offers_greeter")
    assert greeter.closed
    with pytest.raises(LookupError):
        kernel.service("greeter")


def test_register_service_checks_its_arguments(tmp_path) -> None:
    def bad(ctx):
        ctx.register_service("", None)

    kernel = make_kernel(tmp_path)
    status = kernel.register_plugin(bad)
    assert status.state == "failed"
    assert "register_service(name, factory)" in status.reason
