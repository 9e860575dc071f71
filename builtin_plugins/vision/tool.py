"""The ``vision_analyze`` handler: the image read (a path, ``~`` and the call's folder
resolved; a stored image's reference; an http(s) URL under the web SSRF policy; a data URL),
checked and sent with the question to the auxiliary ``vision`` model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import HermesError
from hermes_agent.api import MODELS, ProviderError, ToolCallContext, tool_error, tool_result
from hermes_agent.kits.images import (REF_PREFIX, ImageError, ImageStore, data_url,
                                      human_size, parse_data_url, sniff, web_fetcher)

if TYPE_CHECKING:
    from hermes_agent import Kernel

VISION_ANALYZE: dict[str, Any] = {
    "name": "vision_analyze",
    "description": (
        "Look at an image and answer a question about it: describe it, read its text, "
        "compare details. image_url is an http(s) URL or a local file path (also the path "
        "given for an image the user attached). Uses the auxiliary vision model."),
    "parameters": {
        "type": "object",
        "properties": {
            "image_url": {"type": "string",
                          "description": "The image: an http(s) URL or a local file path"},
            "question": {"type": "string",
                         "description": "What to find out about the image"},
        },
        "required": ["image_url", "question"],
    },
}
DEFAULT_QUESTION = "Describe this image in detail."
_BLIND = ("vision_analyze asks the auxiliary vision model, here {model}, which does not see "
          "images. Set auxiliary.vision.provider and auxiliary.vision.model in config.yaml to "
          "a model that does (e.g. provider openrouter, model google/gemini-2.5-flash), or "
          "model.supports_vision: true if this one does.")


class VisionTool:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def analyze(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        where = str(args.get("image_url") or "").strip()
        question = str(args.get("question") or "").strip() or DEFAULT_QUESTION
        if not where:
            return tool_error("image_url is required: an http(s) URL or a local image path")
        blind = self._blind_model()
        if blind:
            return tool_error(blind)
        store = ImageStore.of(self.kernel)
        try:
            data = self._read(where, store, ctx.cwd)
        except (ImageError, HermesError, OSError) as exc:
            return tool_error(str(exc))
        info = sniff(data)
        if info is None:
            return tool_error(f"{where} is not a PNG, JPEG, GIF or WebP image")
        messages = [{"role": "user", "content": [
            {"type": "text", "text": question},
            {"type": "image_url", "image_url": {"url": data_url(info.media_type, data)}}]}]
        try:
            reply = self.kernel.service(MODELS).call_llm(
                "vision", messages, session_id=ctx.session_id or None)
        except ProviderError as exc:
            return tool_error(f"the vision model failed: {exc}. Set auxiliary.vision.provider "
                              "and auxiliary.vision.model to a model that sees images.")
        return tool_result(analysis=reply.content, image={
            "source": where if not where.startswith("data:") else "data URL",
            "media_type": info.media_type, "width": info.width, "height": info.height,
            "size": human_size(len(data))}, model=reply.model)

    def _blind_model(self) -> str | None:
        """Why the auxiliary vision model would not see the image: ``auxiliary.vision`` is
        left to the main provider (``auto``), whose profile does not see images and
        ``model.supports_vision`` does not say it does. None when it may see."""
        config, env = self.kernel.config, self.kernel.env
        task = (config.get("auxiliary") or {}).get("vision") or {}
        if any(str(task.get(key) or "") not in ("", "auto") for key in ("provider", "model",
                                                                         "base_url")) \
                or env.get("AUXILIARY_VISION_PROVIDER") or env.get("AUXILIARY_VISION_MODEL"):
            return None
        override = config.get("model.supports_vision")
        if override is not None:
            return None if override else _BLIND.format(model="the main model")
        try:
            active = self.kernel.service(MODELS).client().active
            sees, name = bool(active.profile.supports_vision), f"{active.name}/{active.model}"
        except (HermesError, AttributeError):
            return None  # no provider resolved: the call says why
        return None if sees else _BLIND.format(model=name)

    def _read(self, where: str, store: ImageStore, cwd: Path) -> bytes:
        if where.startswith(REF_PREFIX):
            return store.load(where)
        if where.startswith("data:"):
            return parse_data_url(where)
        if where.startswith(("http://", "https://")):
            return web_fetcher(self.kernel)(where, store.max_bytes)
        path = Path(where.removeprefix("file://")).expanduser()
        path = path if path.is_absolute() else Path(cwd) / path
        if not path.is_file():
            raise ImageError(f"no image file at {path}; give an existing path or an https URL")
        if path.stat().st_size > store.max_bytes:
            raise ImageError(f"{path} has {human_size(path.stat().st_size)}, more than "
                             f"vision.max_image_bytes ({human_size(store.max_bytes)})")
        return path.read_bytes()
