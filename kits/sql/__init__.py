"""Owner: the builtin plugin `sessions` (the postgres session store uses it too).

The session-store kit: what every session store shares (``values``: arguments normalised at
the API edge and column values; ``query``: the search query language) and the SQL every SQL
store shares, written once with the dialect as a parameter (``dialect``, ``statements``,
``sessions``, ``lineage``, ``rows``, ``search``). Not part of the contract docs/api.md locks
(docs/kits.md).
"""
