"""A fetched page as markdown: HTML through trafilatura (main content only: navigation,
banners, ads, sidebars, comments and footers dropped; headings, lists, tables and links kept),
plain text and markdown as they are, JSON in a fence.

trafilatura is imported on first use (it takes a while to import), and its absence is a
:class:`WebError` that names the extra to install."""

from __future__ import annotations

from typing import Any

from hermes_agent.api import WebError
from hermes_agent.kits.http import Fetched

HTML_TYPES = ("text/html", "application/xhtml+xml", "")  # "" : no content type, sniffed
INSTALL = "pip install 'hermes-agent-runtime[web-local]'"


def trafilatura_available() -> bool:
    from importlib.util import find_spec

    try:
        return find_spec("trafilatura") is not None
    except ValueError:  # a module entry without a spec: blocked or half-imported
        return False


def to_markdown(page: Fetched) -> tuple[str, str]:
    """``(title, markdown)`` of a fetched page."""
    text = page.text
    if page.content_type in HTML_TYPES and (page.content_type or _looks_like_html(text)):
        return html_to_markdown(page.content, page.url)
    if page.content_type == "application/json" or page.content_type.endswith("+json"):
        return "", f"```json\n{text.strip()}\n```"
    return "", text.strip()


def html_to_markdown(html: str | bytes, url: str = "") -> tuple[str, str]:
    """``(title, markdown)`` of an HTML document: its main content, or all its text when
    trafilatura finds no main content (a very short or unusual page)."""
    trafilatura, load_html, extract_title = _library()
    tree = load_html(html)
    if tree is None:
        text = html.decode("utf-8", "replace") if isinstance(html, bytes) else html
        return "", text.strip()
    if url:  # relative links as the page means them (trafilatura resolves them from the root)
        try:
            tree.make_links_absolute(url, resolve_base_href=True, handle_failures="discard")
        except (ValueError, TypeError):
            pass
    title = (extract_title(tree) or "").strip()
    markdown = trafilatura.extract(
        tree, url=url or None, output_format="markdown", include_links=True,
        include_tables=True, include_formatting=True, include_comments=False,
        include_images=False)
    if not markdown:
        markdown = trafilatura.html2txt(tree) or ""
    return title, markdown.strip()


def _library() -> tuple[Any, Any, Any]:
    try:
        import trafilatura
        from trafilatura.metadata import extract_title
        from trafilatura.utils import load_html
    except ImportError as exc:
        raise WebError(f"the local extractor needs trafilatura ({exc}); install it with "
                       f"{INSTALL}", "unsupported") from exc
    return trafilatura, load_html, extract_title


def _looks_like_html(text: str) -> bool:
    head = text.lstrip()[:512].lower()
    return head.startswith(("<!doctype html", "<html")) or "<body" in head
