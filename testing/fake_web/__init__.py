"""Fake web servers for tests: a web site (pages, redirects, huge, slow and binary bodies),
a resolver for made-up host names, and the Firecrawl API.

    from hermes_agent.testing.fake_web import FakeDNS, FakePageServer
    from hermes_agent.testing.fake_web.firecrawl import FakeFirecrawlServer
"""

from .dns import FakeDNS
from .pages import FakePageServer, PageRequest

__all__ = ["FakeDNS", "FakePageServer", "PageRequest"]
