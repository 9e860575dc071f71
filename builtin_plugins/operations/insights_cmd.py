"""``hermes insights [--days N] [--source S] [--json]``: usage in the terminal, from the
session store's interface (``list_sessions``, newest first, read a page at a time until the
window's start), so it reads the SQLite and the PostgreSQL store alike.

Tokens: ``input`` excludes cached input (docs/model-providers.md): a prompt is
``input + cache read + cache write``, and the cache-hit ratio is the share of prompt tokens
read from the cache. Cost: the provider's ``actual_cost_usd`` where known, else
``estimated_cost_usd``; sessions with neither count as unknown."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from typing import Any

import click
from hermes_agent.kits.cli import cli_kernel

PAGE = 500
COUNTERS = ("sessions", "messages", "tool_calls", "api_calls", "input_tokens", "output_tokens",
            "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def _new() -> dict[str, Any]:
    return {**dict.fromkeys(COUNTERS, 0), "cost_usd": 0.0, "unpriced_sessions": 0}


def _add(total: dict[str, Any], row: dict[str, Any]) -> None:
    total["sessions"] += 1
    total["messages"] += int(row.get("message_count") or 0)
    total["tool_calls"] += int(row.get("tool_call_count") or 0)
    total["api_calls"] += int(row.get("api_call_count") or 0)
    for key in COUNTERS[4:]:
        total[key] += int(row.get(key) or 0)
    cost = _cost(row)
    if cost is None:
        total["unpriced_sessions"] += 1
    else:
        total["cost_usd"] += cost


def _cost(row: dict[str, Any]) -> float | None:
    for key in ("actual_cost_usd", "estimated_cost_usd"):
        if row.get(key) is not None:
            return float(row[key])
    return None


def cache_hit(total: dict[str, Any]) -> float | None:
    prompt = total["input_tokens"] + total["cache_read_tokens"] + total["cache_write_tokens"]
    return total["cache_read_tokens"] / prompt if prompt else None


def gather(store: Any, days: float, source: str | None, now: float | None = None,
           top: int = 5) -> dict[str, Any]:
    now = time.time() if now is None else now
    since = now - days * 86400
    total = _new()
    by: dict[str, dict[str, dict[str, Any]]] = {"model": defaultdict(_new),
                                                "source": defaultdict(_new),
                                                "day": defaultdict(_new)}
    costly: list[tuple[float, dict[str, Any]]] = []
    offset = 0
    while True:
        rows = store.list_sessions(source=source, limit=PAGE, offset=offset)
        for row in rows:
            started = float(row.get("started_at") or 0)
            if started < since:
                continue
            _add(total, row)
            _add(by["model"][row.get("model") or "(unknown)"], row)
            _add(by["source"][row.get("source") or "(unknown)"], row)
            _add(by["day"][time.strftime("%Y-%m-%d", time.localtime(started))], row)
            cost = _cost(row)
            if cost:
                costly.append((cost, {"id": row["id"], "title": row.get("title"),
                                      "model": row.get("model"), "source": row.get("source"),
                                      "started_at": started, "cost_usd": cost}))
        if len(rows) < PAGE or float(rows[-1].get("started_at") or 0) < since:
            break
        offset += PAGE
    costly.sort(key=lambda item: -item[0])
    return {"days": days, "since": since, "until": now, "source": source,
            "store": store.name, "total": total,
            "cache_hit_ratio": cache_hit(total),
            "by_model": _sorted(by["model"]), "by_source": _sorted(by["source"]),
            "by_day": dict(sorted(by["day"].items())),
            "most_expensive": [entry for _, entry in costly[:top]]}


def _sorted(groups: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return dict(sorted(groups.items(), key=lambda kv: (-kv[1]["cost_usd"],
                                                       -kv[1]["sessions"], kv[0])))


def _n(value: int) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.1f}{suffix}"
    return str(value)


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def _table(title: str, groups: dict[str, dict[str, Any]], bars: bool = False) -> list[str]:
    if not groups:
        return []
    width = max(len(title), *(len(k) for k in groups))
    lines = ["", f"{title:<{width}}  {'SESSIONS':>8}  {'INPUT':>7}  {'OUTPUT':>7}  "
                 f"{'CACHED':>7}  {'COST':>9}"]
    peak = max(g["cost_usd"] for g in groups.values()) or 0
    for key, g in groups.items():
        bar = ("  " + "#" * round(20 * g["cost_usd"] / peak)) if bars and peak else ""
        lines.append(f"{key:<{width}}  {g['sessions']:>8}  {_n(g['input_tokens']):>7}  "
                     f"{_n(g['output_tokens']):>7}  {_n(g['cache_read_tokens']):>7}  "
                     f"{_usd(g['cost_usd']):>9}{bar}")
    return lines


def render(report: dict[str, Any]) -> list[str]:
    total = report["total"]
    window = (f"{time.strftime('%Y-%m-%d', time.localtime(report['since']))} .. "
              f"{time.strftime('%Y-%m-%d', time.localtime(report['until']))}")
    scope = f", source {report['source']}" if report["source"] else ""
    lines = [f"Usage over the last {report['days']:g} days ({window}{scope})"]
    if not total["sessions"]:
        return [*lines, "No sessions in that time."]
    hit = report["cache_hit_ratio"]
    lines += [
        f"sessions {total['sessions']}, messages {total['messages']}, tool calls "
        f"{total['tool_calls']}, API calls {total['api_calls']}",
        f"tokens: input {_n(total['input_tokens'])}, output {_n(total['output_tokens'])}, "
        f"cache read {_n(total['cache_read_tokens'])}, cache write "
        f"{_n(total['cache_write_tokens'])}, reasoning {_n(total['reasoning_tokens'])}"
        + (f"; cache hits {hit:.0%} of the prompt tokens" if hit is not None else ""),
        f"cost: {_usd(total['cost_usd'])}"
        + (f" ({total['unpriced_sessions']} sessions without a known cost)"
           if total["unpriced_sessions"] else ""),
    ]
    lines += _table("MODEL", report["by_model"])
    lines += _table("SOURCE", report["by_source"])
    lines += _table("DAY", report["by_day"], bars=True)
    if report["most_expensive"]:
        lines += ["", "most expensive sessions:"]
        lines += [f"  {_usd(s['cost_usd']):>9}  {s['id']}  {s['source']}  {s['model'] or '-'}"
                  + (f"  {s['title']}" if s.get("title") else "")
                  for s in report["most_expensive"]]
    return lines


@click.command(name="insights")
@click.option("--days", type=click.FloatRange(min=0, min_open=True), default=30,
              show_default=True, help="The window: the last N days.")
@click.option("--source", help="Only sessions of this source (cli, telegram, cron, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def insights(days: float, source: str | None, as_json: bool) -> None:
    """Usage over the last days: sessions, tokens, cache hits and cost, per model, per source
    and per day, and the most expensive sessions."""
    from hermes_agent.api import session_store

    report = gather(session_store(cli_kernel()), days, source)
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(render(report)))
