"""The ``anthropic_messages`` API mode (anthropic SDK): conversion to Anthropic blocks,
``system_and_3`` prompt caching, extended thinking from ``reasoning_effort``, and the
normalised response (signed thinking blocks are kept in ``reasoning_details`` so the next
turn can send them back)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hermes_agent.api import (
    ChatRequest,
    ChatResponse,
    EventCallback,
    StreamEvent,
    ToolCall,
)

from .anthropic_convert import apply_cache_control, convert_messages
from .runtime import DEFAULT_TIMEOUT, Transport, attr, sent_as_json
from .usage import anthropic_usage

DEFAULT_MAX_TOKENS = 8192  # when neither the call, config.yaml nor the profile sets one
THINKING_BUDGET = {"minimal": 1024, "low": 4096, "medium": 8192, "high": 16384, "xhigh": 32768}
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
                "max_tokens": "length", "refusal": "content_filter", "pause_turn": "stop"}


def anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, seen = [], set()
    for tool in tools:
        fn = tool.get("function", tool)
        name = fn.get("name", "")
        if not name or name in seen:
            continue
        seen.add(name)
        out.append({"name": name, "description": fn.get("description", ""),
                    "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}})
    return out


def anthropic_tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice in (None, "auto"):
        return {"type": "auto"} if choice else None
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return {"type": "tool", "name": name}
    return None


class AnthropicTransport(Transport):
    api_mode = "anthropic_messages"

    def make_client(self) -> Any:
        import anthropic

        from .nettrack import tracked_http_client

        key = self.runtime.api_key
        oauth = key.startswith("sk-ant-oat")  # a Claude OAuth token is a bearer token
        return anthropic.Anthropic(api_key=None if oauth else key or None,
                                   auth_token=key if oauth else None,
                                   base_url=self.runtime.base_url or None, max_retries=0,
                                   timeout=self.runtime.timeout or DEFAULT_TIMEOUT,
                                   default_headers=dict(self.runtime.profile.default_headers) or None,
                                   http_client=tracked_http_client(anthropic.DefaultHttpxClient))

    def build_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        system, messages = convert_messages(request.messages)
        apply_cache_control(system, messages, request.cache_ttl)
        max_tokens = self.max_tokens_for(request) or DEFAULT_MAX_TOKENS  # required here
        kwargs: dict[str, Any] = {"model": request.model or self.runtime.model,
                                  "messages": messages, "max_tokens": max_tokens}
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = anthropic_tools(request.tools)
            choice = anthropic_tool_choice(request.tool_choice)
            if choice:
                kwargs["tool_choice"] = choice
        extra = self.merged_extra_body(request)
        if request.reasoning_effort:
            budget = THINKING_BUDGET.get(request.reasoning_effort, THINKING_BUDGET["medium"])
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
            kwargs["max_tokens"] = max(max_tokens, budget + 4096)
        elif request.temperature is not None:
            extra["temperature"] = request.temperature  # thinking requires the default
        if request.stream:
            kwargs["stream"] = True
        if extra:
            kwargs["extra_body"] = extra
        kwargs["timeout"] = self.timeout_for(request)
        return kwargs

    def send(self, kwargs: dict[str, Any], emit: EventCallback | None,
             on_open: Callable[[Callable[[], None]], None]) -> ChatResponse:
        result = self.client.messages.create(
            **sent_as_json(kwargs, ("messages", "system", "tools")))
        if kwargs.get("stream"):
            with result:  # released at once if the stream fails or a callback raises
                return self._collect(result, emit)
        return self._normalise(attr(result, "content") or [], attr(result, "stop_reason"),
                               attr(result, "usage"), attr(result, "model", ""), attr(result, "id", ""))

    def _normalise(self, blocks: list[Any], stop: str | None, usage: Any, model: str,
                   message_id: str) -> ChatResponse:
        text, thinking, details, calls = [], [], [], []
        for block in blocks:
            kind = attr(block, "type")
            if kind == "text":
                text.append(attr(block, "text", ""))
            elif kind == "tool_use":
                calls.append(ToolCall(attr(block, "id", ""), attr(block, "name", ""),
                                      json.dumps(attr(block, "input", {}) or {})))
            elif kind == "thinking":
                thinking.append(attr(block, "thinking", ""))
                details.append({"type": "thinking", "thinking": attr(block, "thinking", ""),
                                "signature": attr(block, "signature", "")})
            elif kind == "redacted_thinking":
                details.append({"type": "redacted_thinking", "data": attr(block, "data", "")})
        return ChatResponse(
            content="".join(text), tool_calls=calls,
            finish_reason=STOP_REASONS.get(stop or "", "tool_calls" if calls else "stop"),
            reasoning="".join(thinking) or None, reasoning_details=details or None,
            usage=anthropic_usage(usage), model=model, provider=self.runtime.name,
            api_mode=self.api_mode, id=message_id)

    def _collect(self, stream: Any, emit: EventCallback | None) -> ChatResponse:
        blocks: dict[int, dict[str, Any]] = {}
        tool_index: dict[int, int] = {}
        usage: dict[str, Any] = {}
        stop, model, message_id = None, "", ""
        for event in stream:
            kind = attr(event, "type")
            if kind == "message_start":
                message = attr(event, "message")
                model, message_id = attr(message, "model", ""), attr(message, "id", "")
                usage.update(_usage_dict(attr(message, "usage")))
            elif kind == "content_block_start":
                block = attr(event, "content_block")
                index = attr(event, "index", 0)
                entry = {"type": attr(block, "type"), "text": "", "thinking": "", "signature": "",
                         "json": "", "id": attr(block, "id", ""), "name": attr(block, "name", ""),
                         "data": attr(block, "data", "")}
                blocks[index] = entry
                if entry["type"] == "tool_use":
                    tool_index[index] = len(tool_index)
                    if emit:
                        emit(StreamEvent("tool_call", "", tool_index[index], entry["id"], entry["name"]))
            elif kind == "content_block_delta":
                index = attr(event, "index", 0)
                entry = blocks.setdefault(index, {"type": "text", "text": "", "json": ""})
                delta = attr(event, "delta")
                dtype = attr(delta, "type")
                if dtype == "text_delta":
                    piece = attr(delta, "text", "")
                    entry["text"] += piece
                    if emit and piece:
                        emit(StreamEvent("text", piece))
                elif dtype == "thinking_delta":
                    piece = attr(delta, "thinking", "")
                    entry["thinking"] += piece
                    if emit and piece:
                        emit(StreamEvent("reasoning", piece))
                elif dtype == "signature_delta":
                    entry["signature"] += attr(delta, "signature", "")
                elif dtype == "input_json_delta":
                    piece = attr(delta, "partial_json", "")
                    entry["json"] += piece
                    if emit and piece:
                        emit(StreamEvent("tool_call", piece, tool_index.get(index, 0)))
            elif kind == "message_delta":
                stop = attr(attr(event, "delta"), "stop_reason") or stop
                usage.update({k: v for k, v in _usage_dict(attr(event, "usage")).items() if v})
        final = []
        for _, entry in sorted(blocks.items()):
            if entry["type"] == "tool_use":
                try:
                    args = json.loads(entry["json"] or "{}")
                except ValueError:
                    args = {}
                final.append({"type": "tool_use", "id": entry["id"], "name": entry["name"], "input": args})
            else:
                final.append(entry)
        return self._normalise(final, stop, usage, model, message_id)


def _usage_dict(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return {k: attr(raw, k) for k in keys if attr(raw, k) is not None}
