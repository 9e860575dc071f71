"""``python -m hermes_agent.testing.fake_llm [--port N] [--reply TEXT]``: a fake model server
to try hermes without a model. It prints the URL it listens on and the settings that point
hermes at it, answers every request with the same text, and serves until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .replies import reply_text
from .server import FakeLLMServer

DEFAULT_REPLY = "Hello from the fake LLM server: hermes reached it, no model was asked."


def instructions(server: FakeLLMServer) -> str:
    base = server.openai_base_url
    return "\n".join([
        f"fake LLM server listening on {server.url} (Chat Completions and Responses at "
        f"{base}, Anthropic Messages at {server.url})",
        "Point hermes at it (in config.yaml, or with these commands):",
        "  hermes config set model.provider custom",
        f"  hermes config set model.base_url {base}",
        "  hermes config set model.default fake-model",
        'then: hermes chat -q "hello"    Every request gets the same answer. Ctrl-C stops it.',
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hermes_agent.testing.fake_llm",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0,
                        help="127.0.0.1 port to listen on (default 0: a free one)")
    parser.add_argument("--reply", default=DEFAULT_REPLY, help="the text every answer holds")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server = FakeLLMServer(default_reply=reply_text(args.reply), port=args.port).start()
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; choose another "
              "port with --port N (0 picks a free one)", file=sys.stderr)
        return 1
    print(instructions(server), flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print("fake LLM server stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
