"""A fake of the media APIs on 127.0.0.1: OpenAI's ``/v1/audio/speech``,
``/v1/audio/transcriptions`` and ``/v1/images/generations`` (the wire format the openai SDK
speaks) and fal.ai's ``POST /<model>`` run endpoint. See :class:`FakeMediaAPI`."""

from .server import PNG, FakeMediaAPI

__all__ = ["FakeMediaAPI", "PNG"]
