"""A fake resolver for the fetcher's ``resolve`` seam: host names the test invents, answered
with the addresses it chooses, in turn (a DNS-rebinding attacker answers public first and
private after).

    dns = FakeDNS({"public.test": ["127.0.0.1"], "rebind.test": [["93.184.215.14"], ["10.0.0.1"]]})
    fetch(url, resolve=dns, allowed_hosts={"public.test"})
    assert dns.calls == ["public.test"]
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence


class FakeDNS:
    """``resolve(host, port)``: a host's answers from the table (a list of lists is answered
    in turn, the last one repeating); an unknown host raises ``socket.gaierror``. Every call
    is recorded in :attr:`calls`."""

    def __init__(self, table: dict[str, Sequence[str] | Sequence[Sequence[str]]]):
        self._answers = {host: [list(a) for a in answers] if answers and
                         not isinstance(answers[0], str) else [list(answers)]
                         for host, answers in table.items()}
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, host: str, port: int) -> list[str]:
        with self._lock:
            self.calls.append(host)
            answers = self._answers.get(host)
            if answers is None:
                raise socket.gaierror(socket.EAI_NONAME, f"fake DNS: {host} is not in the table")
            return answers.pop(0) if len(answers) > 1 else list(answers[0])
