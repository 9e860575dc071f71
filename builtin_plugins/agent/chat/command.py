"""``hermes chat`` (and ``hermes`` alone): talk to the agent in the terminal.

``-q "..."`` answers once and exits (non-zero when the turn failed); ``--json`` writes one
JSON event per line instead of text (with ``-q`` for that turn, otherwise for every line read
from standard input). With no provider configured, a person at a terminal is offered
``hermes setup``; otherwise the how-to-configure message is printed and the exit code is 1.
The interactive chat asks about an untrusted project folder first (:mod:`.trust_question`).
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from hermes_agent import Kernel

EXIT_FAILED, EXIT_INTERRUPTED = 1, 130
MAX_STDIN_BYTES = 1_000_000  # piped into one message; about 250,000 tokens


@click.command("chat")
@click.option("-q", "--query", metavar="TEXT",
              help="Ask once, print the answer and exit (piped input is appended; - reads "
                   "the message from standard input).")
@click.option("-r", "--resume", metavar="ID|TITLE", help="Continue a stored session.")
@click.option("-c", "--continue", "continue_", is_flag=True,
              help="Continue the most recent CLI session.")
@click.option("-m", "--model", metavar="MODEL", help="Model id for this run.")
@click.option("--provider", metavar="NAME", help="Model provider for this run.")
@click.option("-t", "--toolsets", metavar="A,B", help="Comma-separated toolsets to offer.")
@click.option("--json", "as_json", is_flag=True, help="Write a JSON event stream.")
@click.option("--max-turns", type=int, metavar="N", help="Tool-calling iterations per message.")
@click.option("--image", "images", multiple=True, metavar="PATH",
              help="An image to send with the -q message (repeatable; in a chat: /image PATH).")
def chat(query: str | None, resume: str | None, continue_: bool, model: str | None,
         provider: str | None, toolsets: str | None, as_json: bool,
         max_turns: int | None, images: tuple[str, ...] = ()) -> int:
    """Chat with the agent (interactive unless -q is given)."""
    if images and query is None:
        raise click.UsageError("--image goes with -q; in an interactive chat use /image PATH")
    return run_chat(query=query, resume=resume, continue_=continue_, model=model,
                    provider=provider, toolsets=toolsets, as_json=as_json, max_turns=max_turns,
                    images=images)


def run_chat(*, query: str | None = None, resume: str | None = None, continue_: bool = False,
             model: str | None = None, provider: str | None = None,
             toolsets: str | None = None, as_json: bool = False,
             max_turns: int | None = None, images: tuple[str, ...] = ()) -> int:
    from hermes_agent import HermesError
    from hermes_agent.api import NoProviderError
    from hermes_agent.kits.cli import cli_kernel

    from ..loop import Agent, AgentOptions
    from ..store_link import SessionLink, active_store

    kernel = cli_kernel()
    interactive = query is None and not as_json and stdin_is_tty()
    if interactive:  # -q and --json never trust a folder by themselves
        from .trust_question import ask_about_trust

        kernel = ask_about_trust(kernel)
    chosen = [t.strip() for t in toolsets.split(",") if t.strip()] if toolsets is not None else None
    _check_toolsets(kernel, chosen)
    options = AgentOptions(platform="cli", provider=provider, model=model,
                           max_iterations=max_turns, toolsets=chosen)
    questions = None
    if interactive:
        from .questions import TerminalQuestions

        questions = TerminalQuestions()
        options.approval_callback, options.clarify_callback = questions.approval, questions.clarify
    session_id = None
    if resume or continue_:
        link = SessionLink(active_store(kernel))
        session_id = link.resolve(resume) if resume else link.latest("cli")
        if session_id is None:
            what = f"session {resume!r}" if resume else "CLI session to continue"
            raise HermesError(f"no {what} found; `hermes sessions list` shows the stored "
                              "sessions (resume by id or title)")
    try:
        agent = Agent(kernel, options, session_id=session_id)
    except NoProviderError as exc:
        if not interactive or provider is not None:
            raise  # the one-screen message on how to configure a provider; exit 1
        kernel = _offer_setup(kernel, str(exc))
        agent = Agent(kernel, options, session_id=session_id)
    query = _with_stdin(query, interactive, as_json)
    if as_json:
        return _json_mode(agent, query)
    if query is not None:
        return _once(agent, query, images)
    from .repl import interactive as repl

    return repl(agent, kernel, questions)


def _check_toolsets(kernel: Kernel, chosen: list[str] | None) -> None:
    """``--toolsets`` (else config.yaml's ``toolsets``) names only registered toolsets: a
    misspelt one would silently leave the model without its tools."""
    if chosen is not None:
        problem = kernel.tools.unknown_toolsets(chosen)
        if problem or not chosen:
            raise click.BadParameter(problem or "name at least one toolset", param_hint="'--toolsets'")
        return
    configured = kernel.config.get("toolsets")
    problem = kernel.tools.unknown_toolsets(configured) if configured else None
    if problem:
        from hermes_agent import ConfigError

        raise ConfigError(f"config.yaml `toolsets`: {problem}; fix it with `hermes config set "
                          "toolsets '[...]'`, or pass --toolsets for this run")


def stdin_is_tty() -> bool:
    return sys.stdin.isatty()


def _with_stdin(query: str | None, interactive: bool, as_json: bool) -> str | None:
    """The message to send once: ``-q TEXT`` with piped input after a blank line, or the
    piped input alone (``-q -``, or no ``-q``); None for a chat that reads its input itself."""
    if query == "-" or (query is None and not interactive and not as_json):
        return piped_stdin(required=True)
    if query is None:
        return None
    extra = piped_stdin()
    return f"{query}\n\n{extra}" if extra else query


def piped_stdin(required: bool = False) -> str:
    """What a pipe or a file on standard input holds (``echo data | hermes chat -q ...``), at
    most :data:`MAX_STDIN_BYTES`; "" for a terminal, /dev/null or no standard input. With
    ``required`` (``-q -``, or no ``-q``), nothing to read is an error."""
    data = b""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # closed, or not a real file
        mode = 0
    if stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode):
        data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        if len(data) > MAX_STDIN_BYTES:
            raise click.ClickException(
                f"standard input holds more than {MAX_STDIN_BYTES:,} bytes, more than hermes "
                "sends as one message; pipe in a part of it (e.g. `head -c 200000 FILE | "
                "hermes chat -q ...`)")
    text = data.decode("utf-8", errors="replace").strip("\n")
    if required and not text.strip():
        raise click.ClickException("nothing to send: standard input is empty or not a pipe; "
                                   "give the message with -q TEXT, or pipe it in "
                                   "(`echo TEXT | hermes chat -q -`)")
    return text


def _offer_setup(kernel: Kernel, how_to: str) -> Any:
    """Nothing is configured and a person is at the terminal: offer ``hermes setup``, then
    return a kernel that sees the new configuration. Declining prints ``how_to``, exit 1."""
    from hermes_agent.kits.cli import reload_cli_kernel

    if not click.confirm("No model provider is configured. Run setup now?", default=True):
        click.echo(how_to, err=True)
        raise click.exceptions.Exit(EXIT_FAILED)
    kernel.close()  # its plugins are stopped; the setup runs on a fresh kernel
    reload_cli_kernel()
    ctx = click.get_current_context()
    setup = ctx.find_root().command.get_command(ctx, "setup")  # the models plugin's command
    if setup is None:
        raise click.ClickException("`hermes setup` is not available: the models plugin is not "
                                   "loaded (`hermes plugins doctor models` says why)")
    ctx.invoke(setup)  # a failure raises, ending the chat with setup's message and code
    return reload_cli_kernel()


def _once(agent: Any, message: str, images: tuple[str, ...] = ()) -> int:
    from .images import compose
    from .plugin_notices import FaultNotices, load_failures
    from .render import TerminalRenderer, resume_hint
    from .runner import run_turn

    content, notes = compose(agent.kernel, message, paths=images)
    if notes and images:  # an image asked for by name must not go missing silently
        raise click.ClickException(f"image not attached: {notes[0]}")
    for note in notes:
        click.echo(f"warning: image not attached: {note}", err=True)

    renderer = TerminalRenderer(sys.stdout, sys.stderr, tools="summary")
    notices = FaultNotices(agent.kernel)
    for line in load_failures(agent.kernel):
        click.echo(f"warning: {line}", err=True)
    result = None
    try:
        result = run_turn(agent, content, renderer)  # type: ignore[arg-type]
    finally:  # a stop signal (ChatStopped) or Ctrl-C ends the session as interrupted
        agent.finalize("shutdown" if result is not None and not result.interrupted
                       else "interrupted")
        for line in notices.new():
            click.echo(f"warning: {line}", err=True)
        if agent.session_stored:  # on stderr: standard output is the answer alone
            click.echo(resume_hint(agent.session_id), err=True)
    if result.interrupted:
        return EXIT_INTERRUPTED
    return 0 if result.completed else EXIT_FAILED


def _json_mode(agent: Any, query: str | None) -> int:
    from .plugin_notices import FaultNotices, load_failures
    from .render import JsonRenderer
    from .runner import run_turn

    renderer = JsonRenderer(sys.stdout)
    renderer({"type": "session", "session_id": agent.session_id, "model": agent.model,
              "provider": agent.provider, "tools": agent.tool_names})
    notices = FaultNotices(agent.kernel)
    for line in load_failures(agent.kernel):
        renderer({"type": "plugin_failed", "message": line})
    code, reason = 0, "interrupted"  # unless the loop ends normally (ChatStopped, Ctrl-C)
    try:
        messages = [query] if query is not None else (line.rstrip("\n") for line in sys.stdin)
        for message in messages:
            if not message.strip():
                continue
            result = run_turn(agent, message, renderer)
            for line in notices.new():
                renderer({"type": "plugin_failed", "message": line})
            if result.interrupted:
                return EXIT_INTERRUPTED
            code = 0 if result.completed else EXIT_FAILED
        reason = "shutdown"
    finally:
        agent.finalize(reason)
    return code
