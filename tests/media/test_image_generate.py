"""image_generate against the fake media API: the OpenAI images API through the real openai
SDK and fal.ai's run endpoint, both speaking their wire format on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_agent.kits.media import split_media
from hermes_agent.testing.fake_media import PNG


def generate(kernel, **args):
    return json.loads(kernel.tools.dispatch("image_generate", args))


def test_openai_images_are_saved_under_hermes_home_and_named_in_the_media_tag(
        home, media, kernel_with):
    kernel = kernel_with({"image_gen": {"provider": "openai", "openai": {
        "base_url": media.openai_base_url, "model": "gpt-image-1"}}},
        env={"OPENAI_API_KEY": media.key})
    result = generate(kernel, prompt="a lighthouse at dusk", aspect_ratio="portrait")
    assert result["success"] is True, result
    image = Path(result["image"])
    assert image.parent == home / "cache" / "images" and image.read_bytes() == PNG
    assert result["provider"] == "openai" and result["revised_prompt"] == "a revised prompt"
    [request] = media.requests("/v1/images/generations")
    assert request.headers["authorization"] == f"Bearer {media.key}"
    assert request.body == {"model": "gpt-image-1", "prompt": "a lighthouse at dusk", "n": 1,
                            "size": "1024x1536"}
    _, refs = split_media(result["media_tag"])
    assert [(r.path, r.kind) for r in refs] == [(image, "image")]


def test_fal_answers_a_data_uri_or_a_url_on_its_own_host(home, media, kernel_with):
    kernel = kernel_with({"image_gen": {"provider": "fal", "model": "fal-ai/flux/schnell",
                                        "fal": {"base_url": media.fal_base_url}}},
                         env={"FAL_KEY": media.key})
    result = generate(kernel, prompt="a red fox", aspect_ratio="square")
    assert result["success"] is True, result
    assert Path(result["image"]).read_bytes() == PNG
    [request] = media.requests("/fal/fal-ai/flux/schnell")
    assert request.headers["authorization"] == f"Key {media.key}"
    assert request.body == {"prompt": "a red fox", "image_size": "square_hd", "num_images": 1,
                            "sync_mode": True}
    media.fal_as_url = True  # a URL to fetch: allowed on the provider's own (loopback) host
    again = generate(kernel, prompt="a blue fox")
    assert again["success"] is True, again
    assert Path(again["image"]).read_bytes() == PNG and media.requests("/files/image.png")


def test_an_image_url_on_a_private_host_other_than_the_providers_is_refused(
        home, media, kernel_with):
    from hermes_agent.kits.media import GeneratedImage
    from hermes_agent.builtin_plugins.image_gen.tool import _bytes_of

    kernel = kernel_with({"image_gen": {"provider": "fal", "fal": {
        "base_url": "https://fal.example"}}}, env={"FAL_KEY": media.key})
    provider = kernel.slots.get("image_gen", "fal")
    try:
        _bytes_of(GeneratedImage(url=f"{media.url}/files/image.png"), provider, kernel,
                  1 << 20, 10.0)
    except Exception as exc:
        assert "could not download" in str(exc) and "private" in str(exc).lower()
    else:
        raise AssertionError("a loopback URL was fetched")
    assert media.requests("/files/image.png") == []


def test_missing_keys_and_unknown_providers_say_what_to_set(media, kernel_with):
    kernel = kernel_with({"image_gen": {"provider": "fal"}})
    result = generate(kernel, prompt="anything")
    assert result["success"] is False and "FAL_KEY is not set" in result["error"]
    kernel = kernel_with({"image_gen": {"provider": "krea"}})
    result = generate(kernel, prompt="anything")
    assert "'krea' is not installed" in result["error"] and "fal, openai" in result["error"]
    kernel = kernel_with({"image_gen": {"provider": "openai", "openai": {
        "base_url": media.openai_base_url}}}, env={"OPENAI_API_KEY": "sk-wrong"})
    result = generate(kernel, prompt="anything")
    assert "refused OPENAI_API_KEY" in result["error"]
    assert generate(kernel, prompt="x", aspect_ratio="wide")["error_type"] == "invalid"
