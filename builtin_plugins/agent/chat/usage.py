"""``/usage``: this session's model calls, tokens and cost, the conversation's over its
compression splits (the sessions it continues, read from the store), and how full the
context is."""

from __future__ import annotations

from typing import Any

from hermes_agent.kits.sql.values import usage_estimated
from hermes_agent.kits.text import plural

from .. import context_link

ESTIMATED = "estimated"  # set on a row whose counts include estimates (shown with ~)
_COUNTS = ("api_call_count", "input_tokens", "output_tokens", "cache_read_tokens",
           "cache_write_tokens")


def _row(agent: Any) -> dict[str, Any]:
    """This session's stored totals, or (not stored yet) the agent's own, in the store's
    columns."""
    if agent.session_stored:
        row = agent.sessions.get(agent.session_id)
        if row is not None:
            return row
    usage = agent.session_usage
    return {"api_call_count": agent.session_api_calls, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "estimated_cost_usd": agent.session_cost}


def continued_sessions(agent: Any, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The sessions this one continues after compression, nearest first (a delegating
    parent is not one of them)."""
    if not agent.session_stored:
        return []
    chain, child = [], row
    for parent in agent.sessions.store.get_ancestors(agent.session_id):
        ended = parent.get("ended_at")
        if (parent.get("end_reason") != "compression" or ended is None
                or float(child.get("started_at") or 0) < float(ended)):
            break
        chain.append(parent)
        child = parent
    return chain


def _used(row: dict[str, Any]) -> bool:
    return any(row.get(k) for k in _COUNTS)


def cost_text(rows: list[dict[str, Any]]) -> str:
    """The rows' estimated cost: ``none`` without any model call, unknown when a call had
    no price, $0.0000 only when the calls were priced at zero."""
    used = [r for r in rows if _used(r)]
    if not used:
        return "none (no model call yet)"
    if any(r.get("estimated_cost_usd") is None for r in used):
        return "unknown (no price for this model)"
    return f"${sum(float(r['estimated_cost_usd']) for r in used):.4f}"


def _totals(rows: list[dict[str, Any]]) -> str:
    total = {k: sum(int(r.get(k) or 0) for r in rows) for k in _COUNTS}
    prompt = total["input_tokens"] + total["cache_read_tokens"] + total["cache_write_tokens"]
    about = "~" if any(r.get(ESTIMATED) for r in rows) else ""  # some counts are estimates
    return (f"{plural(total['api_call_count'], 'model call')}, "
            f"{about}{plural(prompt, 'input token')} ({total['cache_read_tokens']} cached), "
            f"{about}{plural(total['output_tokens'], 'output token')}, estimated cost "
            f"{cost_text(rows)}")


def usage_report(agent: Any) -> str:
    row = dict(_row(agent))
    earlier = [{**r, ESTIMATED: usage_estimated(r)} for r in continued_sessions(agent, row)]
    row[ESTIMATED] = agent.session_usage.estimated or usage_estimated(row)
    # calls this process made that reported no usage (interrupted) are in no stored row
    stored = sum(int(r.get("api_call_count") or 0) for r in [row, *earlier])
    row["api_call_count"] = int(row.get("api_call_count") or 0) + max(
        0, agent.session_api_calls - stored)
    lines = [f"session {agent.session_id}: {_totals([row])}"]
    if row[ESTIMATED]:
        lines.append("~ estimated from the text (about 4 characters a token): the server "
                     "reported no usage")
    if earlier:
        rows = [*reversed(earlier), row]
        lines.append(f"conversation since {earlier[-1]['id']} ({plural(len(rows), 'session')}, "
                     f"split by {plural(len(earlier), 'compression')}): {_totals(rows)}")
    engine = agent.context
    if engine is not None and engine.threshold_tokens:
        tokens, reported = context_link.next_prompt_tokens(agent)
        size = f"{tokens:,}" if reported else f"~{tokens:,} (estimated until the next answer)"
        lines.append(f"context: {size} of {engine.threshold_tokens:,} tokens before compression "
                     f"({engine.context_length:,}-token window), "
                     f"{plural(engine.compression_count, 'compression')} so far")
    return "\n".join(lines)
