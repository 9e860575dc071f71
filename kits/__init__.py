"""``hermes_agent.kits``: shared implementation that plugins may import by choice.

A kit is code several plugins use (SQL for session stores, the SSRF-safe HTTP client, the
ASGI server, secret masking, ...). Unlike :mod:`hermes_agent.api` it is not a contract:
each kit names the plugin that owns it, and may change with that plugin. docs/kits.md
lists them. Import a kit by its module path; this package exports nothing.
"""
