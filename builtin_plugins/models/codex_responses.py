"""The ``codex_responses`` API mode (openai SDK, Responses API).

System messages become ``instructions``; the conversation becomes input items: user and
assistant messages, ``function_call`` and ``function_call_output`` items, and the
``reasoning`` items of earlier turns (kept in the assistant message's
``reasoning_details`` with their ``encrypted_content``, since requests use ``store=False``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_agent.api import (
    ChatRequest,
    ChatResponse,
    EventCallback,
    ProviderError,
    StreamEvent,
    ToolCall,
)

from .runtime import Transport, attr, openai_client, sent_as_json
from .usage import responses_usage


def _input_parts(content: Any, role: str) -> Any:
    if isinstance(content, str) or content is None:
        return content or ""
    kind = "output_text" if role == "assistant" else "input_text"
    parts = []
    for part in content:
        if part.get("type") == "text":
            parts.append({"type": kind, "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            parts.append({"type": "input_image", "image_url": (part.get("image_url") or {}).get("url", "")})
    return parts


def input_items(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """``(instructions, input items)`` for OpenAI-format ``messages``."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            instructions.append(content if isinstance(content, str) else
                                " ".join(p.get("text", "") for p in content or () if isinstance(p, dict)))
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id", ""),
                          "output": content if isinstance(content, str) else str(content or "")})
        elif role == "assistant":
            for detail in message.get("reasoning_details") or ():
                if isinstance(detail, dict) and detail.get("type") == "reasoning":
                    items.append({k: v for k, v in detail.items()
                                  if k in ("type", "id", "summary", "encrypted_content")})
            if content:
                items.append({"role": "assistant", "content": _input_parts(content, "assistant")})
            for call in message.get("tool_calls") or ():
                fn = call.get("function") or {}
                items.append({"type": "function_call", "call_id": call.get("id", ""),
                              "name": fn.get("name", ""), "arguments": fn.get("arguments") or "{}"})
        else:
            items.append({"role": "user", "content": _input_parts(content, "user")})
    return "\n\n".join(i for i in instructions if i), items


def responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        fn = tool.get("function", tool)
        out.append({"type": "function", "name": fn.get("name", ""),
                    "description": fn.get("description", ""),
                    "parameters": fn.get("parameters") or {"type": "object", "properties": {}}})
    return out


class ResponsesTransport(Transport):
    api_mode = "codex_responses"

    def make_client(self) -> Any:
        return openai_client(self.runtime)

    def build_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        instructions, items = input_items(request.messages)
        kwargs: dict[str, Any] = {"model": request.model or self.runtime.model, "input": items,
                                  "store": False, "include": ["reasoning.encrypted_content"]}
        if instructions:
            kwargs["instructions"] = instructions
        if request.tools:
            kwargs["tools"] = responses_tools(request.tools)
            if isinstance(request.tool_choice, str):
                kwargs["tool_choice"] = request.tool_choice
        max_tokens = self.max_tokens_for(request)
        if max_tokens:
            kwargs["max_output_tokens"] = max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.reasoning_effort:
            kwargs["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
        if request.stream:
            kwargs["stream"] = True
        extra = self.merged_extra_body(request)
        if extra:
            kwargs["extra_body"] = extra
        kwargs["timeout"] = self.timeout_for(request)
        return kwargs

    def send(self, kwargs: dict[str, Any], emit: EventCallback | None,
             on_open: Callable[[Callable[[], None]], None]) -> ChatResponse:
        result = self.client.responses.create(**sent_as_json(kwargs, ("input", "tools")))
        if kwargs.get("stream"):
            with result:  # released at once if the stream fails or a callback raises
                return self._collect(result, emit)
        return self._normalise(result)

    def _normalise(self, raw: Any) -> ChatResponse:
        text, summary, details, calls = [], [], [], []
        for item in attr(raw, "output") or ():
            kind = attr(item, "type")
            if kind == "message":
                text.extend(attr(part, "text", "") for part in attr(item, "content") or ()
                            if attr(part, "type") == "output_text")
            elif kind == "function_call":
                calls.append(ToolCall(attr(item, "call_id", "") or attr(item, "id", ""),
                                      attr(item, "name", ""), attr(item, "arguments", "") or "{}"))
            elif kind == "reasoning":
                parts = [{"type": "summary_text", "text": attr(p, "text", "")}
                         for p in attr(item, "summary") or ()]
                summary.extend(p["text"] for p in parts)
                detail = {"type": "reasoning", "id": attr(item, "id", ""), "summary": parts}
                if attr(item, "encrypted_content"):
                    detail["encrypted_content"] = attr(item, "encrypted_content")
                details.append(detail)
        status = attr(raw, "status", "completed")
        incomplete = attr(attr(raw, "incomplete_details"), "reason")
        finish = ("length" if status == "incomplete" and incomplete == "max_output_tokens"
                  else "content_filter" if status == "incomplete"
                  else "tool_calls" if calls else "stop")
        return ChatResponse(content="".join(text), tool_calls=calls, finish_reason=finish,
                            reasoning="\n".join(s for s in summary if s) or None,
                            reasoning_details=details or None,
                            usage=responses_usage(attr(raw, "usage")), model=attr(raw, "model", ""),
                            provider=self.runtime.name, api_mode=self.api_mode, id=attr(raw, "id", ""))

    def _collect(self, stream: Any, emit: EventCallback | None) -> ChatResponse:
        call_index: dict[str, int] = {}
        final = None
        for event in stream:
            kind = attr(event, "type", "")
            if kind == "response.output_text.delta":
                if emit:
                    emit(StreamEvent("text", attr(event, "delta", "")))
            elif kind == "response.reasoning_summary_text.delta":
                if emit:
                    emit(StreamEvent("reasoning", attr(event, "delta", "")))
            elif kind == "response.output_item.added":
                item = attr(event, "item")
                if attr(item, "type") == "function_call":
                    index = call_index[attr(item, "id", "")] = len(call_index)
                    if emit:
                        emit(StreamEvent("tool_call", "", index, attr(item, "call_id"), attr(item, "name")))
            elif kind == "response.function_call_arguments.delta":
                if emit:
                    emit(StreamEvent("tool_call", attr(event, "delta", ""),
                                     call_index.get(attr(event, "item_id", ""), 0)))
            elif kind in ("response.completed", "response.incomplete"):
                final = attr(event, "response")
            elif kind in ("response.failed", "error"):
                error = attr(attr(event, "response"), "error") or event
                raise ProviderError(f"{self.runtime.name}: the response failed: "
                                    f"{attr(error, 'message', 'unknown error')}",
                                    reason="server_error", provider=self.runtime.name)
        if final is None:
            raise ProviderError(f"{self.runtime.name}: the stream ended without a completed "
                                "response; retry", reason="network", provider=self.runtime.name)
        return self._normalise(final)
