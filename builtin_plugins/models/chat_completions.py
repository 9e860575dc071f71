"""The ``chat_completions`` API mode (openai SDK): OpenAI, OpenRouter, Nous Portal, DeepSeek,
Gemini's OpenAI-compatible endpoint, Ollama, LM Studio, vLLM, llama.cpp and any custom
``base_url``. Our internal messages already use this format; only our own bookkeeping keys
are dropped before sending.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_agent.api import (
    ChatRequest,
    ChatResponse,
    EventCallback,
    StreamEvent,
    ToolCall,
)

from .runtime import Transport, attr, openai_client, sent_as_json, tool_schemas
from .usage import chat_usage

_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


def wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with only the keys the Chat Completions API accepts."""
    out = []
    for message in messages:
        clean = {k: message[k] for k in _MESSAGE_KEYS if k in message}
        if clean.get("role") == "assistant" and clean.get("tool_calls") == []:
            del clean["tool_calls"]
        out.append(clean)
    return out


class ChatCompletionsTransport(Transport):
    api_mode = "chat_completions"

    def make_client(self) -> Any:
        return openai_client(self.runtime)

    def build_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        runtime = self.runtime
        kwargs: dict[str, Any] = {"model": request.model or runtime.model,
                                  "messages": wire_messages(request.messages)}
        if request.tools:
            kwargs["tools"] = tool_schemas(request.tools)
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        max_tokens = self.max_tokens_for(request)
        if max_tokens:
            kwargs[runtime.profile.max_tokens_param] = max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.reasoning_effort:
            kwargs["reasoning_effort"] = request.reasoning_effort
        if request.stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        extra = self.merged_extra_body(request)
        if extra:
            kwargs["extra_body"] = extra
        kwargs["timeout"] = self.timeout_for(request)
        return kwargs

    def send(self, kwargs: dict[str, Any], emit: EventCallback | None,
             on_open: Callable[[Callable[[], None]], None]) -> ChatResponse:
        result = self.client.chat.completions.create(
            **sent_as_json(kwargs, ("messages", "tools")))
        if kwargs.get("stream"):
            with result:  # released at once if the stream fails or a callback raises
                return self._collect(result, emit)
        return self._normalise(result)

    def _normalise(self, raw: Any) -> ChatResponse:
        choices = attr(raw, "choices") or []
        message = attr(choices[0], "message") if choices else None
        calls = [ToolCall(attr(c, "id", "") or f"call_{i}", attr(attr(c, "function"), "name", ""),
                          attr(attr(c, "function"), "arguments", "") or "{}")
                 for i, c in enumerate(attr(message, "tool_calls") or [])]
        reasoning = attr(message, "reasoning_content") or attr(message, "reasoning")
        finish = attr(choices[0], "finish_reason") if choices else None
        return ChatResponse(
            content=attr(message, "content") or "", tool_calls=calls,
            finish_reason=finish or ("tool_calls" if calls else "stop"),
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
            usage=chat_usage(attr(raw, "usage")), model=attr(raw, "model", ""),
            provider=self.runtime.name, api_mode=self.api_mode, id=attr(raw, "id", ""))

    def _collect(self, stream: Any, emit: EventCallback | None) -> ChatResponse:
        text: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        finish = None
        usage = None
        model = ""
        response_id = ""
        for chunk in stream:
            model = model or attr(chunk, "model", "")
            response_id = response_id or attr(chunk, "id", "")
            chunk_usage = attr(chunk, "usage")
            if chunk_usage is not None:
                usage = chunk_usage
            for choice in attr(chunk, "choices") or ():
                delta = attr(choice, "delta")
                finish = attr(choice, "finish_reason") or finish
                if delta is None:
                    continue
                piece = attr(delta, "content")
                if piece:
                    text.append(piece)
                    if emit:
                        emit(StreamEvent("text", piece))
                thought = attr(delta, "reasoning_content") or attr(delta, "reasoning")
                if isinstance(thought, str) and thought:
                    reasoning.append(thought)
                    if emit:
                        emit(StreamEvent("reasoning", thought))
                for call in attr(delta, "tool_calls") or ():
                    index = attr(call, "index", 0)
                    fn = attr(call, "function")
                    slot = calls.get(index)
                    call_id, name = attr(call, "id"), attr(fn, "name")
                    args = attr(fn, "arguments") or ""
                    if slot is None:
                        slot = calls[index] = [call_id or f"call_{index}", name or "", ""]
                    else:
                        slot[0] = call_id or slot[0]
                        slot[1] = slot[1] or name or ""
                    slot[2] += args
                    if emit:
                        emit(StreamEvent("tool_call", args, index, call_id, name))
        tool_calls = [ToolCall(c[0], c[1], c[2] or "{}") for _, c in sorted(calls.items())]
        return ChatResponse(
            content="".join(text), tool_calls=tool_calls,
            finish_reason=finish or ("tool_calls" if tool_calls else "stop"),
            reasoning="".join(reasoning) or None, usage=chat_usage(usage), model=model,
            provider=self.runtime.name, api_mode=self.api_mode, id=response_id)
