"""Images in ``hermes chat`` (docs/vision.md): ``/image PATH`` attaches an image to the next
message, ``--image PATH`` to the ``-q`` message, and an image file's path written in a
message (a dragged-in or pasted path; quoted, or with ``\\ `` for spaces, as terminals paste
them) attaches that file; the text stays as written. The images are stored under ``$HERMES_HOME/images`` at once, so
a missing or oversized file is reported before the turn starts."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.kits.images import ImageError, ImageStore, describe, image_paths

if TYPE_CHECKING:
    from hermes_agent import Kernel


def attach(state: Any, args: str) -> str:
    """``/image PATH``: store the image for the next message."""
    raw = args.strip().strip("'\"").replace("\\ ", " ")
    if not raw:
        waiting = getattr(state, "images", [])
        if waiting:
            return "Attached to your next message: " + ", ".join(
                describe(part) for part in waiting) + " (/image clear drops them)"
        return "Usage: /image PATH (the image goes with your next message)"
    if raw == "clear":
        state.images = []
        return "No images attached."
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(state.kernel.cwd or Path.cwd()) / path
    try:
        part = ImageStore.of(state.kernel).save_file(path)
    except ImageError as exc:
        return f"/image: {exc}"
    state.images = [*getattr(state, "images", []), part]
    return f"Attached {describe(part)}; it goes with your next message."


def names_an_image(line: str, cwd: str | Path) -> bool:
    """Whether a line that starts with ``/`` is an image's path rather than a command."""
    first = line.split(maxsplit=1)[0] if line.strip() else ""
    return bool(first) and bool(image_paths(first, cwd))


def compose(kernel: Kernel, text: str, attached: Iterable[dict[str, Any]] = (),
            paths: Iterable[str | Path] = (), cwd: str | Path | None = None
            ) -> tuple[str | list[dict[str, Any]], list[str]]:
    """The message the agent gets (text alone, or text and image parts) and a note per
    image that could not be attached."""
    store = ImageStore.of(kernel)
    base = Path(cwd or kernel.cwd or Path.cwd())
    parts = list(attached)
    notes: list[str] = []
    for path in [*(Path(p) for p in paths), *image_paths(text, base)]:
        try:
            parts.append(store.save_file(path if path.is_absolute() else base / path))
        except ImageError as exc:
            notes.append(str(exc))
    if not parts:
        return text, notes
    return [*([{"type": "text", "text": text}] if text else []), *parts], notes
