"""The pieces of api.WebHTTP the backends' tests do not reach one by one: reading settings,
Retry-After and the servers' error shapes."""

from __future__ import annotations

import logging
import time
from email.utils import formatdate

import pytest

from hermes_agent.kits.http import http_options, retry_after_seconds
from hermes_agent.kits.http.client import error_detail


def test_http_options_keeps_good_values_and_logs_the_rest(caplog) -> None:
    caplog.set_level(logging.WARNING)
    config = {"timeout": "2.5", "connect_timeout": 1, "max_retries": -1,
              "retry_after_cap": True, "country": "de"}
    assert http_options(config) == {"timeout": 2.5, "connect_timeout": 1.0}
    assert "ignoring max_retries=-1" in caplog.text and "retry_after_cap=True" in caplog.text
    assert http_options(None) == {}


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert retry_after_seconds("7") == 7.0 and retry_after_seconds("-3") == 0.0
    assert 0 < retry_after_seconds(formatdate(time.time() + 20, usegmt=True)) <= 20
    assert retry_after_seconds("tomorrow") is None and retry_after_seconds("") is None


@pytest.mark.parametrize("body, text, expected", [
    ({"detail": {"error": "Unauthorized: missing or invalid API key."}}, "",
     "Unauthorized: missing or invalid API key."),  # Tavily
    ({"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "Too many"}}, "",
     "Too many"),  # Brave
    ({"requestId": "r", "error": "Invalid API key", "tag": "INVALID_API_KEY"}, "",
     "Invalid API key"),  # Exa
    (None, "  403 Forbidden\n", "403 Forbidden"),  # SearXNG's plain text
    (None, "\n<!doctype html><html>…</html>", ""),  # a proxy's error page says nothing
    ({"unexpected": 1}, "", ""),
])
def test_error_detail_reads_each_service_s_shape(body, text, expected) -> None:
    assert error_detail(body, text) == expected
