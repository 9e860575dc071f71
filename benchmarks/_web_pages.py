"""Realistic HTML pages of a chosen size for the extraction benchmark: a site header and
navigation, a cookie banner, an article (headings, paragraphs with links, lists, a table, code),
ads and a related-links sidebar, comments, a footer, inline scripts, JSON-LD and styles, as news,
docs and blog pages are built. Deterministic (seeded), standard library only."""

from __future__ import annotations

import json
import random

WORDS = ("the of and to in is that for it as with was on be by this are from at or an have "
         "which not but can more one all their has been were its would about other will what "
         "when there into than time only some could new these two may first then any like "
         "system data model water energy city market policy research network council report "
         "software release engine protocol storage latency throughput budget election river "
         "climate harvest museum archive library language community hospital transport").split()

KINDS = ("news", "docs", "blog")


def sentence(rng: random.Random, low: int = 8, high: int = 22) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, link_base: str) -> str:
    parts = []
    for _ in range(rng.randint(3, 6)):
        text = sentence(rng)
        if rng.random() < 0.3:
            word = rng.choice(WORDS)
            text = text.replace(f" {word} ", f' <a href="{link_base}/{word}">{word}</a> ', 1)
        parts.append(text)
    return f"<p>{' '.join(parts)}</p>"


def _nav(rng: random.Random, n: int) -> str:
    items = "".join(f'<li><a href="/section/{rng.choice(WORDS)}-{i}">{rng.choice(WORDS).title()}'
                    f"</a></li>" for i in range(n))
    return f'<nav class="site-nav" aria-label="Main"><ul>{items}</ul></nav>'


def _script(rng: random.Random, size: int) -> str:
    body = "".join(f"var v{i}=function(a,b){{return a*{rng.randint(1, 99)}+b;}};"
                   for i in range(max(1, size // 50)))
    return f"<script>{body}</script>"


def _table(rng: random.Random) -> str:
    rows = "".join(f"<tr><td>{rng.choice(WORDS).title()}</td><td>{rng.randint(1, 999)}</td>"
                   f"<td>{rng.random():.3f}</td></tr>" for _ in range(rng.randint(4, 10)))
    return ("<table><thead><tr><th>Name</th><th>Count</th><th>Share</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _aside(rng: random.Random) -> str:
    links = "".join(f'<li><a href="/story/{i}">{sentence(rng, 4, 8)}</a></li>' for i in range(12))
    return (f'<aside class="sidebar"><div class="ad">Advertisement: {sentence(rng)}</div>'
            f'<h3>Related stories</h3><ul class="related">{links}</ul></aside>')


def _comments(rng: random.Random, n: int) -> str:
    items = "".join(f'<div class="comment"><b>user{i}</b><p>{sentence(rng)}</p></div>'
                    for i in range(n))
    return f'<section id="comments"><h3>Comments</h3>{items}</section>'


def make_page(size: int, seed: int = 0, kind: str = "news") -> str:
    """An HTML page of about ``size`` bytes (about a third of it scripts and styles)."""
    rng = random.Random(seed)
    title = sentence(rng, 5, 9).rstrip(".")
    base = f"https://{kind}.example.org"
    head = (f"<head><meta charset='utf-8'><title>{title} | {kind.title()} Site</title>"
            f"<meta name='description' content='{sentence(rng)}'>"
            f"<style>{'body{margin:0} .a{color:#333} ' * (size // 400)}</style>"
            '<script type="application/ld+json">'
            + json.dumps({"@type": "Article", "headline": title, "datePublished": "2026-03-14"})
            + "</script>" + _script(rng, size // 6) + "</head>")
    top = (f'<header><a href="/" class="logo">{kind.title()} Site</a>{_nav(rng, 25)}</header>'
           '<div class="cookie-banner">We use cookies to improve your experience. '
           '<button>Accept all</button></div>')
    article, length = [f"<h1>{title}</h1>", '<p class="byline">By A. Writer, 14 March 2026</p>'], 0
    budget = size * 2 // 3 - len(head) - len(top)
    section = 0
    while length < budget:
        section += 1
        block = [f"<h2>{sentence(rng, 3, 6).rstrip('.')}</h2>"]
        block += [paragraph(rng, base) for _ in range(rng.randint(2, 5))]
        if section % 3 == 0:
            block.append("<ul>" + "".join(f"<li>{sentence(rng, 4, 10)}</li>"
                                          for _ in range(5)) + "</ul>")
        if section % 4 == 0:
            block.append(_table(rng))
        if kind == "docs" and section % 2 == 0:
            block.append(f"<pre><code>def f(x):\n    return x * {section}\n</code></pre>")
        piece = "".join(block)
        article.append(piece)
        length += len(piece)
    body = (f"<body>{top}<main><article>{''.join(article)}</article>{_aside(rng)}</main>"
            f"{_comments(rng, 8 if kind == 'blog' else 2)}"
            f"<footer>{_nav(rng, 15)}<p>© 2026 {kind.title()} Site. All rights reserved.</p>"
            f"</footer>{_script(rng, size // 8)}</body>")
    return f"<!DOCTYPE html><html lang='en'>{head}{body}</html>"
