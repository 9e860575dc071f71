"""``image_generate``: the selected provider makes the images; each is saved under
``$HERMES_HOME/cache/images`` (bytes as returned, a ``data:`` URI decoded, an http(s) URL
fetched under the web SSRF policy: public addresses only, plus the provider's own host) and
named in the result's ``image``/``images`` and ``media_tag`` (the gateway sends it as a
photo)."""

from __future__ import annotations

import base64
import binascii
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hermes_agent.api import ToolCallContext, tool_error, tool_result
from hermes_agent.kits.media import GeneratedImage, MediaError, media_tag

if TYPE_CHECKING:
    from hermes_agent import Kernel

ASPECT_RATIOS = ("landscape", "square", "portrait")
SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/jpg": ".jpg",
            "image/webp": ".webp", "image/gif": ".gif"}
IMAGE_SCHEMA: dict[str, Any] = {
    "name": "image_generate",
    "description": (
        "Generate an image from a text prompt. Returns the saved image's path; on a "
        "messaging platform the image is sent to the chat. The provider and model are "
        "configured by the user (image_gen.provider)."),
    "parameters": {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": (
                "The image to generate, described in detail.")},
            "aspect_ratio": {"type": "string", "enum": list(ASPECT_RATIOS),
                             "default": "landscape", "description": (
                "landscape (wide), square (1:1) or portrait (tall).")},
        },
        "required": ["prompt"],
    },
}


def image_dir(kernel: "Kernel") -> Path:
    folder = kernel.home / "cache" / "images"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def select(kernel: "Kernel") -> Any:
    name = kernel.slots.selection("image_gen", kernel.config)
    providers = kernel.slots.providers.get("image_gen", {})
    entry = providers.get(name) or next((p for p in providers.values() if p.plugin == name),
                                        None)
    if entry is None:
        installed = ", ".join(sorted(providers)) or "none"
        raise MediaError(f"image_gen.provider {name!r} is not installed; installed: "
                         f"{installed}. Choose one with `hermes config set image_gen.provider "
                         "NAME` (docs/image-generation.md).", "not_configured")
    provider = entry.obj  # a provider written for the original may lack the optional parts
    if not getattr(provider, "is_available", lambda: True)():
        reason = getattr(provider, "unavailable_reason", lambda: "")() or "its key is not set"
        raise MediaError(f"image_gen is configured to use {name!r} (image_gen.provider), but "
                         f"{reason}", "missing_key")
    return provider


def _bytes_of(image: GeneratedImage, provider: Any, kernel: "Kernel",
              limit: int, timeout: float) -> tuple[bytes, str]:
    if image.data is not None:
        return image.data, image.mime_type
    url = image.url
    if url.startswith("data:"):
        head, _, payload = url.partition(",")
        mime = head[5:].split(";")[0] or image.mime_type
        try:
            return base64.b64decode(payload, validate=False), mime
        except (binascii.Error, ValueError):
            raise MediaError("the provider returned a malformed data: URI", "malformed") from None
    if not url.startswith(("http://", "https://")):
        raise MediaError(f"the provider returned no image (url {url[:80]!r})", "malformed")
    from hermes_agent.api import WebError
    from hermes_agent.kits.http.fetcher import fetch

    own = getattr(provider, "base_url", None)
    hosts = {urlsplit(own()).hostname or ""} if callable(own) else set()
    try:
        fetched = fetch(url, allow_private=bool(kernel.config.get(
            "web.allow_private_networks", False)), allowed_hosts=hosts - {""},
            max_bytes=limit, timeout=min(timeout, 60.0), text_only=False)
    except WebError as exc:
        raise MediaError(f"could not download the generated image from {url[:120]}: {exc}",
                         "unreachable") from None
    return fetched.content, fetched.content_type or image.mime_type


def save(kernel: "Kernel", content: bytes, mime: str) -> Path:
    suffix = SUFFIXES.get(mime.lower(), ".png")
    stamp = time.strftime("%Y%m%d_%H%M%S")
    path = image_dir(kernel) / f"image_{stamp}_{uuid.uuid4().hex[:8]}{suffix}"
    path.write_bytes(content)
    return path


def image_generate(kernel: "Kernel", args: dict[str, Any], ctx: ToolCallContext) -> str:
    prompt = str(args.get("prompt") or "").strip()
    if not prompt:
        return tool_error("'prompt' is required: describe the image to generate.",
                          success=False, error_type="invalid")
    aspect = str(args.get("aspect_ratio") or "landscape").strip().lower()
    if aspect not in ASPECT_RATIOS:
        return tool_error(f"'aspect_ratio' must be one of {', '.join(ASPECT_RATIOS)}, not "
                          f"{aspect!r}.", success=False, error_type="invalid")
    limit = int(kernel.config.get("image_gen.max_image_bytes", 20 * 1024 * 1024))
    timeout = float(kernel.config.get("image_gen.timeout", 180.0) or 180.0)
    try:
        provider = select(kernel)
        own = kernel.config.get(f"image_gen.{provider.name}.model")
        model = str(own or kernel.config.get("image_gen.model")
                    or getattr(provider, "default_model", lambda: "")())
        images = provider.generate(prompt, aspect, model=model)
        if not images:
            raise MediaError(f"{provider.name} returned no image", "malformed")
        paths = []
        for image in images:
            content, mime = _bytes_of(image, provider, kernel, limit, timeout)
            if len(content) > limit:
                raise MediaError(f"the image is {len(content)} bytes, over "
                                 f"image_gen.max_image_bytes ({limit})", "invalid")
            paths.append(save(kernel, content, mime))
    except MediaError as exc:
        return tool_error(f"image_generate: {exc}", success=False,
                          error_type=f"image_gen_{exc.kind}")
    except OSError as exc:
        return tool_error(f"image_generate could not save the image: {exc}", success=False,
                          error_type="image_gen_io")
    answer: dict[str, Any] = {
        "success": True, "image": str(paths[0]), "images": [str(p) for p in paths],
        "media_tag": media_tag(paths), "provider": provider.name, "model": model,
        "aspect_ratio": aspect}
    revised = next((i.revised_prompt for i in images if i.revised_prompt), "")
    if revised:
        answer["revised_prompt"] = revised
    return tool_result(answer)
