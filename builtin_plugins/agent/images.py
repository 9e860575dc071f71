"""Images in the agent's turns (docs/vision.md): a user message of content parts has its
images stored by reference before it is recorded (``hermes_agent.kits.images``), and each
request gets them as image content when the model sees images (the provider profile's
``supports_vision``, or ``model.supports_vision`` in config.yaml), else as a line of text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import HermesError
from hermes_agent.kits.images import (ImageError, ImageStore, content_text, for_model,
                                      web_fetcher)

if TYPE_CHECKING:
    from hermes_agent import Kernel


def stored_content(kernel: Kernel, content: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """``content`` with its images stored and referenced, and a note per image that could
    not be used (it becomes a text part saying why, so the model can tell the user)."""
    store = ImageStore.of(kernel)
    fetch_url = web_fetcher(kernel)
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    for part in content:
        try:
            out.extend(store.store_parts([part], fetch_url))
        except (ImageError, HermesError, OSError) as exc:
            notes.append(str(exc))
            out.append({"type": "text", "text": f"[image not attached: {exc}]"})
    images = [i for i, p in enumerate(out) if p.get("type") == "image_url"]
    for index in images[store.max_images:]:
        note = (f"at most {store.max_images} images go with one message (vision.max_images); "
                "send the others in another message")
        out[index] = {"type": "text", "text": f"[image not attached: {note}]"}
        notes.append(note)
    return out, notes


def sees_images(kernel: Kernel, client: Any) -> bool:
    """Whether the model in use gets images as images."""
    override = kernel.config.get("model.supports_vision")
    if override is not None:
        return bool(override)
    profile = getattr(client.active, "profile", None)
    return bool(getattr(profile, "supports_vision", False))


def with_images_resolved(kernel: Kernel, client: Any,
                         messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages with stored images as data URLs or descriptions."""
    if not any(isinstance(m.get("content"), list) for m in messages):
        return messages
    return for_model(messages, ImageStore.of(kernel), vision=sees_images(kernel, client),
                     api_mode=str(getattr(client.active, "api_mode", "") or ""))


__all__ = ["content_text", "sees_images", "stored_content", "with_images_resolved"]
