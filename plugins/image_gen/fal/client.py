"""fal.ai's synchronous run endpoint: ``POST {base}/{model}`` with ``Authorization: Key
FAL_KEY`` and ``{"prompt", "image_size", "num_images", "sync_mode": true}``; the answer's
``images[].url`` are data URIs (sync mode) or CDN URLs. The aspect ratio is fal's
``image_size`` preset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent.kits.media import GeneratedImage, MediaError

if TYPE_CHECKING:
    from hermes_agent import Kernel

DEFAULT_URL = "https://fal.run"
DEFAULT_MODEL = "fal-ai/flux-2/klein/9b"
KEY_URL = "https://fal.ai/dashboard/keys"
TIMEOUT = 180.0
SIZES = {"landscape": "landscape_16_9", "square": "square_hd", "portrait": "portrait_16_9"}


class FalImages:
    name = "fal"
    display_name = "fal.ai"

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel

    def api_key(self) -> str:
        return str(self.kernel.config.get("image_gen.fal.api_key")
                   or self.kernel.env.get("FAL_KEY") or "")

    def base_url(self) -> str:
        return str(self.kernel.config.get("image_gen.fal.base_url")
                   or self.kernel.env.get("FAL_BASE_URL") or DEFAULT_URL).rstrip("/")

    def is_available(self) -> bool:
        return bool(self.api_key())

    def unavailable_reason(self) -> str:
        return "" if self.api_key() else (
            f"FAL_KEY is not set: get one at {KEY_URL} and put it in $HERMES_HOME/.env")

    def default_model(self) -> str:
        return DEFAULT_MODEL

    def generate(self, prompt: str, aspect_ratio: str = "landscape", *, model: str = "",
                 **options: Any) -> list[GeneratedImage]:
        import httpx2

        model = (model or DEFAULT_MODEL).strip("/")
        url = f"{self.base_url()}/{model}"
        body = {"prompt": prompt, "image_size": SIZES.get(aspect_ratio, "landscape_16_9"),
                "num_images": 1, "sync_mode": True}
        try:
            response = httpx2.post(url, json=body, timeout=TIMEOUT, trust_env=False,
                                   headers={"Authorization": f"Key {self.api_key()}"})
        except httpx2.HTTPError as exc:
            raise MediaError(f"cannot reach fal.ai at {self.base_url()}: "
                             f"{type(exc).__name__}; check image_gen.fal.base_url",
                             "unreachable") from None
        if response.status_code in (401, 403):
            raise MediaError(f"fal.ai refused FAL_KEY (HTTP {response.status_code}); check it "
                             f"at {KEY_URL}", "missing_key", status=response.status_code)
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status_code >= 400 or not isinstance(data, dict):
            detail = data.get("detail") if isinstance(data, dict) else response.text[:300]
            raise MediaError(f"fal.ai {model} failed (HTTP {response.status_code}): {detail}",
                             "http", status=response.status_code)
        images = []
        for row in data.get("images") or []:
            if isinstance(row, dict) and row.get("url"):
                images.append(GeneratedImage(url=str(row["url"]), mime_type=str(
                    row.get("content_type") or "image/png")))
        if not images:
            raise MediaError(f"fal.ai {model} answered without images", "malformed")
        return images
