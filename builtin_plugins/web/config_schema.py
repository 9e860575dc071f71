"""The web tools' keys in the ``web`` section of config.yaml. The kernel owns ``web.backend``
(the ``web_search`` slot's selection); this section extends it with the per-capability
selections, the explicit fallback list, the extraction limits and the safety switches.
Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class WebSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    search_backend: str = ""  # overrides web.backend for web_search
    extract_backend: str = ""  # overrides web.backend for web_extract
    # tried in this order when the selected backend fails (never a refused URL); empty: none
    fallback: list[str] = Field(default_factory=list)
    extract_char_limit: int = Field(15000, gt=0)  # longer pages are summarised or truncated
    allow_private_networks: bool = False  # let web_extract fetch private/loopback addresses
    timeout: float = Field(60.0, gt=0)  # seconds one backend call may take
    max_urls: int = Field(5, gt=0)  # URLs per web_extract call
    max_results: int = Field(10, gt=0)  # cap on web_search's limit
    # a rate-limited call is retried once when the server asks to wait at most this long
    retry_wait_max: float = Field(5.0, ge=0)
    cache_entries: int = Field(256, ge=0)  # cached results per session (0: no cache)
    summary_input_limit: int = Field(100000, gt=0)  # characters of a page sent to summarise
