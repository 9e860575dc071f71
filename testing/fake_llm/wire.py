"""Render a :class:`Reply` in the three wire formats: a JSON body for plain requests, or a
list of server-sent events ``(event_name_or_None, data_dict_or_"[DONE]")`` for streams."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from .replies import Reply

Event = tuple[str | None, Any]


def _hex() -> str:
    return uuid.uuid4().hex[:24]


def error_body(style: str, reply: Reply, message: str | None = None) -> dict[str, Any]:
    message = reply.error_message if message is None else message
    if style == "anthropic":
        kind = reply.error_type or {401: "authentication_error", 429: "rate_limit_error",
                                    529: "overloaded_error", 404: "not_found_error"}.get(
            reply.status, "api_error" if reply.status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = reply.error_type or {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(
        reply.status, "server_error" if reply.status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": kind, "param": None}}


# --- Chat Completions ----------------------------------------------------------------------


def _chat_usage(u: dict[str, int]) -> dict[str, Any]:
    prompt = u["input_tokens"] + u["cache_read_tokens"] + u["cache_write_tokens"]
    return {"prompt_tokens": prompt, "completion_tokens": u["output_tokens"],
            "total_tokens": prompt + u["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
            "completion_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]}}


def chat_body(reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": c.name, "arguments": json.dumps(c.arguments)}} for c in reply.tool_calls]
    return {"id": f"chatcmpl-{_hex()}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": reply.finish("chat"), "logprobs": None}],
            "usage": _chat_usage(usage)}


def chat_events(reply: Reply, model: str, usage: dict[str, int],
                include_usage: bool) -> list[Event]:
    base = {"id": f"chatcmpl-{_hex()}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.reasoning:
        events.append(chunk({"reasoning_content": reply.reasoning}))
    events += [chunk({"content": piece}) for piece in reply.chunks()]
    for index, call in enumerate(reply.tool_calls):
        args = json.dumps(call.arguments)
        events.append(chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                             "function": {"name": call.name, "arguments": ""}}]}))
        half = len(args) // 2
        for part in (args[:half], args[half:]):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    events.append(chunk({}, reply.finish("chat")))
    if include_usage:
        events.append((None, {**base, "choices": [], "usage": _chat_usage(usage)}))
    events.append((None, "[DONE]"))
    return events


# --- Anthropic Messages --------------------------------------------------------------------


def _anthropic_usage(u: dict[str, int]) -> dict[str, Any]:
    return {"input_tokens": u["input_tokens"], "output_tokens": u["output_tokens"],
            "cache_read_input_tokens": u["cache_read_tokens"],
            "cache_creation_input_tokens": u["cache_write_tokens"]}


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning,
                       "signature": f"sig-{_hex()}"})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id.replace("call_", "toolu_"),
                       "name": call.name, "input": call.arguments})
    return blocks


def anthropic_body(reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
    return {"id": f"msg_{_hex()}", "type": "message", "role": "assistant", "model": model,
            "content": _anthropic_blocks(reply), "stop_reason": reply.finish("anthropic"),
            "stop_sequence": None, "usage": _anthropic_usage(usage)}


def anthropic_events(reply: Reply, model: str, usage: dict[str, int]) -> list[Event]:
    start_usage = {**_anthropic_usage(usage), "output_tokens": 1}
    events: list[Event] = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_{_hex()}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}),
        ("ping", {"type": "ping"})]
    for index, block in enumerate(_anthropic_blocks(reply)):
        kind = block["type"]
        empty = {"thinking": {"type": "thinking", "thinking": "", "signature": ""},
                 "text": {"type": "text", "text": ""},
                 "tool_use": {**block, "input": {}}}[kind]
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": empty}))
        if kind == "text":
            deltas = [{"type": "text_delta", "text": p} for p in reply.chunks()]
        elif kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]
        else:
            args = json.dumps(block["input"])
            half = len(args) // 2
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in (args[:half], args[half:])]
        events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": reply.finish("anthropic"), "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# --- Responses -----------------------------------------------------------------------------


def _responses_usage(u: dict[str, int]) -> dict[str, Any]:
    total_in = u["input_tokens"] + u["cache_read_tokens"]
    return {"input_tokens": total_in, "input_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
            "output_tokens": u["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
            "total_tokens": total_in + u["output_tokens"]}


def _responses_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.reasoning:
        items.append({"type": "reasoning", "id": f"rs_{_hex()}", "encrypted_content": f"enc-{_hex()}",
                      "summary": [{"type": "summary_text", "text": reply.reasoning}]})
    if reply.text:
        items.append({"type": "message", "id": f"msg_{_hex()}", "status": "completed",
                      "role": "assistant", "content": [{"type": "output_text", "text": reply.text,
                                                        "annotations": []}]})
    for call in reply.tool_calls:
        items.append({"type": "function_call", "id": f"fc_{_hex()}", "call_id": call.id,
                      "name": call.name, "arguments": json.dumps(call.arguments),
                      "status": "completed"})
    return items


def responses_body(reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
    status = "incomplete" if reply.finish_reason == "length" else "completed"
    body = {"id": f"resp_{_hex()}", "object": "response", "created_at": int(time.time()),
            "status": status, "model": model, "output": _responses_items(reply),
            "usage": _responses_usage(usage), "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "error": None, "incomplete_details": None}
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    return body


def responses_events(reply: Reply, model: str, usage: dict[str, int]) -> list[Event]:
    final = responses_body(reply, model, usage)
    events: list[Event] = [("response.created", {"type": "response.created", "response": {
        **final, "status": "in_progress", "output": [], "usage": None}})]
    for index, item in enumerate(final["output"]):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opened["content"] = []
        if item["type"] == "function_call":
            opened["arguments"] = ""
        events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": index, "item": opened}))
        if item["type"] == "message":
            for piece in reply.chunks():
                events.append(("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": item["id"],
                    "output_index": index, "content_index": 0, "delta": piece, "logprobs": []}))
        elif item["type"] == "function_call":
            events.append(("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "item_id": item["id"],
                "output_index": index, "delta": item["arguments"]}))
        elif item["type"] == "reasoning":
            events.append(("response.reasoning_summary_text.delta", {
                "type": "response.reasoning_summary_text.delta", "item_id": item["id"],
                "output_index": index, "summary_index": 0, "delta": reply.reasoning}))
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": index, "item": item}))
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    events.append((kind, {"type": kind, "response": final}))
    for number, (_, data) in enumerate(events):
        data["sequence_number"] = number
    return events
