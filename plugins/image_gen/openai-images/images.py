"""``images.generate`` through the openai SDK. GPT Image models answer base64 PNGs; DALL·E
models are asked for base64 too (``response_format``), so nothing is fetched afterwards.
The aspect ratio maps to each family's sizes."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from hermes_agent.kits.media import GeneratedImage, MediaError

if TYPE_CHECKING:
    from hermes_agent import Kernel

DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-image-1"
TIMEOUT = 180.0
GPT_SIZES = {"landscape": "1536x1024", "square": "1024x1024", "portrait": "1024x1536"}
DALLE_SIZES = {"landscape": "1792x1024", "square": "1024x1024", "portrait": "1024x1792"}


class OpenAIImages:
    name = "openai"
    display_name = "OpenAI images"

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel

    def _setting(self, key: str) -> str:
        return str(self.kernel.config.get(f"image_gen.openai.{key}") or "")

    def api_key(self) -> str:
        return self._setting("api_key") or str(self.kernel.env.get("OPENAI_API_KEY") or "")

    def base_url(self) -> str:
        return (self._setting("base_url") or str(self.kernel.env.get("OPENAI_BASE_URL") or "")
                or DEFAULT_URL)

    def is_available(self) -> bool:
        return bool(self.api_key())

    def unavailable_reason(self) -> str:
        return "" if self.api_key() else (
            "OPENAI_API_KEY is not set: put it in $HERMES_HOME/.env (or image_gen.openai."
            "api_key in config.yaml)")

    def default_model(self) -> str:
        return DEFAULT_MODEL

    def generate(self, prompt: str, aspect_ratio: str = "landscape", *, model: str = "",
                 **options: Any) -> list[GeneratedImage]:
        import openai

        model = model or DEFAULT_MODEL
        dalle = model.startswith("dall-e")
        request: dict[str, Any] = {
            "model": model, "prompt": prompt, "n": 1,
            "size": (DALLE_SIZES if dalle else GPT_SIZES).get(aspect_ratio, "1024x1024")}
        if dalle:
            request["response_format"] = "b64_json"
        if self._setting("quality"):
            request["quality"] = self._setting("quality")
        client = openai.OpenAI(api_key=self.api_key(), base_url=self.base_url(),
                               timeout=TIMEOUT, max_retries=1)
        try:
            result = client.images.generate(**request)
        except openai.AuthenticationError:
            raise MediaError(f"{self.base_url()} refused OPENAI_API_KEY (HTTP 401); check it",
                             "missing_key", status=401) from None
        except openai.APIStatusError as exc:
            raise MediaError(f"image generation failed at {self.base_url()} (HTTP "
                             f"{exc.status_code}): {exc.message}", "http",
                             status=exc.status_code) from None
        except openai.APIConnectionError as exc:
            raise MediaError(f"cannot reach {self.base_url()}: {exc}; check "
                             "image_gen.openai.base_url", "unreachable") from None
        images = []
        for item in result.data or []:
            revised = getattr(item, "revised_prompt", None) or ""
            if getattr(item, "b64_json", None):
                images.append(GeneratedImage(data=base64.b64decode(item.b64_json),
                                             revised_prompt=revised))
            elif getattr(item, "url", None):
                images.append(GeneratedImage(url=item.url, revised_prompt=revised))
        return images
