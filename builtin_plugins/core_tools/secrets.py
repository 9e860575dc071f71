"""Files whose contents must not reach the model's context: the file tools' side of the
danger detector's credential list (:func:`.danger.paths.is_secret_file`)."""

from __future__ import annotations

from pathlib import Path


def holds_secret(path: Path) -> bool:
    """Whether ``path``, after resolving symlinks, is a file holding secrets."""
    from .danger.paths import is_secret_file  # the detector loads with the first file call

    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: treat as unreadable
        return True
    return is_secret_file(str(path.absolute())) or is_secret_file(str(real))


def refusal(raw: str, path: Path) -> str:
    """Why ``read_file`` will not read ``raw`` and what to do instead."""
    real = path.resolve()
    where = f" (it resolves to {real})" if real != path.absolute() else ""
    return (f"{raw} holds secrets{where}: private keys, credentials and hermes's own .env and "
            "auth.json are not read into the conversation. Ask the user to paste the part "
            "that is needed, or use the tool that consumes the file (ssh, aws, git) directly.")
