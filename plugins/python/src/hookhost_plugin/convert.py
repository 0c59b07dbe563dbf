"""Conversions between the wire's protobuf messages and the dataclasses of
:mod:`hookhost_plugin.types`, and the table of hooks that drives both
protocol versions and the test harness.

Each hook has one row: its catalogue name, its version 1 method, its
request and response messages, and the conversions both ways (the plugin
uses payload-from-wire and answer-to-wire; the test harness, playing the
host, uses the other two).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from . import types as t
from ._proto import plugin_pb2 as pb

__all__ = ["HookRow", "HOOKS", "row_of", "AnswerError"]


class AnswerError(Exception):
    """A handler's answer cannot be sent: the plugin's own mistake."""


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _json_bytes(v: Any, what: str) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    try:
        return t.compact_json(v).encode("utf-8")
    except UnicodeEncodeError:
        raise  # repaired by the caller
    except (TypeError, ValueError) as exc:
        raise AnswerError("%s cannot be encoded as JSON: %s" % (what, exc)) from None


# --- wire -> dataclass -------------------------------------------------------


def tool_spec_from(m: pb.ToolSpec) -> t.ToolSpec:
    """The wire message of a tool spec as its dataclass."""
    schema = None
    if m.input_schema:
        schema = json.loads(m.input_schema)
    return t.ToolSpec(name=m.name, description=m.description, input_schema=schema)


def tool_call_from(m: pb.ToolCall) -> t.ToolCall:
    """The wire message of a tool call as its dataclass."""
    return t.ToolCall(id=m.id, name=m.name, arguments=_text(m.arguments))


def message_from(m: pb.Message) -> t.Message:
    """The wire message of a message as its dataclass."""
    return t.Message(
        role=m.role,
        content=m.content,
        tool_calls=[tool_call_from(c) for c in m.tool_calls],
        tool_call_id=m.tool_call_id,
        tool_name=m.tool_name,
        is_error=m.is_error,
    )


def usage_from(m: pb.Usage) -> t.Usage:
    """The wire message of a usage as its dataclass."""
    return t.Usage(input_tokens=m.input_tokens, output_tokens=m.output_tokens)


def model_request_from(m: pb.ModelRequest) -> t.ModelRequest:
    """The wire message of a model request as its dataclass."""
    return t.ModelRequest(
        model=m.model,
        system=m.system,
        messages=[message_from(x) for x in m.messages],
        tools=[tool_spec_from(x) for x in m.tools],
        max_tokens=m.max_tokens,
        temperature=m.temperature if m.HasField("temperature") else None,
    )


def model_response_from(m: pb.ModelResponse) -> t.ModelResponse:
    """The wire message of a model response as its dataclass."""
    return t.ModelResponse(
        model=m.model,
        message=message_from(m.message),
        usage=usage_from(m.usage),
        stop_reason=m.stop_reason,
    )


def tool_result_from(m: pb.ToolResult) -> t.ToolResult:
    """The wire message of a tool result as its dataclass."""
    return t.ToolResult(content=m.content, is_error=m.is_error)


def patch_from(m: pb.RequestPatch) -> t.RequestPatch:
    """The wire message of a patch as its dataclass."""
    return t.RequestPatch(
        model=m.model if m.HasField("model") else None,
        system=m.system if m.HasField("system") else None,
        messages=[message_from(x) for x in m.messages.messages]
        if m.HasField("messages")
        else None,
        tools=[tool_spec_from(x) for x in m.tools.tools] if m.HasField("tools") else None,
        max_tokens=m.max_tokens if m.HasField("max_tokens") else None,
        temperature=m.temperature if m.HasField("temperature") else None,
    )


def tool_call_request_from(m: pb.ToolCallRequest) -> t.ToolCallRequest:
    """The wire message of a tool call request as its dataclass."""
    return t.ToolCallRequest(
        session_id=m.session_id,
        call_id=m.call_id,
        name=m.name,
        arguments=_text(m.arguments),
        origin=m.origin,
    )


def outcome_from(m: pb.ToolCallOutcome) -> t.ToolCallOutcome:
    """The wire message of an outcome as its dataclass."""
    return t.ToolCallOutcome(
        session_id=m.session_id,
        call_id=m.call_id,
        name=m.name,
        arguments=_text(m.arguments),
        result=tool_result_from(m.result),
        status=m.status,
        duration_ns=m.duration_ns,
        origin=m.origin,
    )


# --- dataclass -> wire -------------------------------------------------------


def _need(v: Any, cls: type, what: str) -> None:
    if not isinstance(v, cls):
        raise AnswerError("%s is a %s, want %s" % (what, type(v).__name__, cls.__name__))


def tool_spec_to(v: t.ToolSpec) -> pb.ToolSpec:
    """A tool spec dataclass as its wire message."""
    _need(v, t.ToolSpec, "a tool")
    schema = b""
    if v.input_schema is not None:
        schema = _json_bytes(v.input_schema, "tool %s's input schema" % v.name)
    return pb.ToolSpec(name=v.name, description=v.description, input_schema=schema)


def tool_call_to(v: t.ToolCall) -> pb.ToolCall:
    """A tool call dataclass as its wire message."""
    _need(v, t.ToolCall, "a tool call")
    return pb.ToolCall(
        id=v.id, name=v.name, arguments=_json_bytes(v.arguments, "tool call arguments")
    )


def message_to(v: t.Message) -> pb.Message:
    """A message dataclass as its wire message."""
    _need(v, t.Message, "a message")
    return pb.Message(
        role=v.role,
        content=v.content,
        tool_calls=[tool_call_to(c) for c in v.tool_calls],
        tool_call_id=v.tool_call_id,
        tool_name=v.tool_name,
        is_error=v.is_error,
    )


def usage_to(v: t.Usage) -> pb.Usage:
    """A usage dataclass as its wire message."""
    return pb.Usage(input_tokens=v.input_tokens, output_tokens=v.output_tokens)


def model_request_to(v: t.ModelRequest) -> pb.ModelRequest:
    """A model request dataclass as its wire message."""
    return pb.ModelRequest(
        model=v.model,
        system=v.system,
        messages=[message_to(x) for x in v.messages],
        tools=[tool_spec_to(x) for x in v.tools],
        max_tokens=v.max_tokens,
        temperature=v.temperature,
    )


def model_response_to(v: t.ModelResponse) -> pb.ModelResponse:
    """A model response dataclass as its wire message."""
    return pb.ModelResponse(
        model=v.model,
        message=message_to(v.message),
        usage=usage_to(v.usage),
        stop_reason=v.stop_reason,
    )


def tool_result_to(v: t.ToolResult) -> pb.ToolResult:
    """A tool result dataclass as its wire message."""
    _need(v, t.ToolResult, "the result")
    if not isinstance(v.content, str):
        raise AnswerError(
            "the result's content is a %s, want str (JSON text; see ToolResult.json)"
            % type(v.content).__name__
        )
    return pb.ToolResult(content=v.content, is_error=bool(v.is_error))


def patch_to(v: t.RequestPatch) -> pb.RequestPatch:
    """A patch dataclass as its wire message."""
    _need(v, t.RequestPatch, "the patch")
    m = pb.RequestPatch(
        model=v.model, system=v.system, max_tokens=v.max_tokens, temperature=v.temperature
    )
    if v.messages is not None:
        m.messages.CopyFrom(pb.MessageList(messages=[message_to(x) for x in v.messages]))
    if v.tools is not None:
        m.tools.CopyFrom(pb.ToolList(tools=[tool_spec_to(x) for x in v.tools]))
    return m


def tool_call_request_to(v: t.ToolCallRequest) -> pb.ToolCallRequest:
    """A tool call request dataclass as its wire message."""
    return pb.ToolCallRequest(
        session_id=v.session_id,
        call_id=v.call_id,
        name=v.name,
        arguments=_json_bytes(v.arguments, "the arguments"),
        origin=v.origin,
    )


def outcome_to(v: t.ToolCallOutcome) -> pb.ToolCallOutcome:
    """An outcome dataclass as its wire message."""
    return pb.ToolCallOutcome(
        session_id=v.session_id,
        call_id=v.call_id,
        name=v.name,
        arguments=_json_bytes(v.arguments, "the arguments"),
        result=tool_result_to(v.result),
        status=v.status,
        duration_ns=v.duration_ns,
        origin=v.origin,
    )


# --- the table ---------------------------------------------------------------


@dataclass(frozen=True)
class HookRow:
    """One hook as the wire carries it."""

    name: str
    method: str  # the version 1 RPC method
    request: type  # request message
    response: type  # response message
    payload_from: Callable[[Any], Any]  # request message -> payload dataclass
    payload_to: Callable[[Any], Any]  # payload dataclass -> request message
    answer_to: Callable[[Any], Any]  # answer (or None) -> response message
    answer_from: Callable[[Any], Any]  # response message -> answer (or None)
    answer_type: Optional[type]  # None for observers


def _observer(name: str, method: str, req: type, frm: Callable, to: Callable) -> HookRow:
    def answer_to(v: Any) -> Any:
        if v is not None:
            raise AnswerError(
                "%s is an observer and answers nothing, got a %s" % (name, type(v).__name__)
            )
        return pb.Empty()

    return HookRow(name, method, req, pb.Empty, frm, to, answer_to, lambda m: None, None)


def _answerer(
    name: str,
    method: str,
    req: type,
    resp: type,
    frm: Callable,
    to: Callable,
    ans_type: type,
    ans_to: Callable,
    ans_from: Callable,
    coerce: Optional[Callable[[Any], Any]] = None,
) -> HookRow:
    def answer_to(v: Any) -> Any:
        if v is None:
            return resp()
        if coerce is not None:
            v = coerce(v)
        if not isinstance(v, ans_type):
            raise AnswerError(
                "the %s handler answered with a %s, want %s or None"
                % (name, type(v).__name__, ans_type.__name__)
            )
        return ans_to(v)

    return HookRow(name, method, req, resp, frm, to, answer_to, ans_from, ans_type)


def _decision_to(d: t.PreToolCallDecision) -> pb.PreToolCallResponse:
    """A pre_tool_call decision as its wire message."""
    m = pb.PreToolCallResponse()
    if d.block is not None:
        _need(d.block, t.Block, "the block")
        m.block.CopyFrom(pb.Block(message=d.block.message))
    if d.ask is not None:
        _need(d.ask, t.Ask, "the ask")
        m.ask.CopyFrom(pb.Ask(reason=d.ask.reason))
    if d.modified_args is not None:
        m.modified_args = _json_bytes(d.modified_args, "modified_args")
        # Tool arguments are a JSON object: anything else is the plugin's
        # mistake, said here rather than counted malformed by the host.
        try:
            args = json.loads(m.modified_args)
        except ValueError as exc:
            raise AnswerError("modified_args is not valid JSON: %s" % exc) from None
        if not isinstance(args, dict):
            raise AnswerError(
                "modified_args is JSON %s, want an object (tool arguments)"
                % type(args).__name__
            )
    return m


def _decision_from(m: pb.PreToolCallResponse) -> Optional[t.PreToolCallDecision]:
    """The wire message of a pre_tool_call decision as its dataclass (None: no opinion)."""
    if not m.HasField("block") and not m.HasField("ask") and not m.HasField("modified_args"):
        return None
    return t.PreToolCallDecision(
        block=t.Block(m.block.message) if m.HasField("block") else None,
        modified_args=_text(m.modified_args) if m.HasField("modified_args") else None,
        ask=t.Ask(m.ask.reason) if m.HasField("ask") else None,
    )


def _user_decision_to(d: t.UserMessageDecision) -> pb.UserMessageResponse:
    """An on_user_message decision as its wire message."""
    m = pb.UserMessageResponse()
    if d.block is not None:
        _need(d.block, t.Block, "the block")
        m.block.CopyFrom(pb.Block(message=d.block.message))
    if d.additional_context:
        if d.block is not None:
            raise AnswerError("both block and additional_context set; answer one of them")
        m.additional_context = d.additional_context
    return m


def _user_decision_from(m: pb.UserMessageResponse) -> Optional[t.UserMessageDecision]:
    """The wire message of an on_user_message decision (None: no opinion)."""
    if not m.HasField("block") and not m.additional_context:
        return None
    return t.UserMessageDecision(
        block=t.Block(m.block.message) if m.HasField("block") else None,
        additional_context=m.additional_context,
    )


def _text_coerce(v: Any) -> Any:
    # transform_llm_output may answer the new text itself.
    return t.TextReplacement(text=v) if isinstance(v, str) else v


def _text_response(v: t.TextReplacement) -> pb.TextResponse:
    if v.stop is not None:
        if v.text:
            raise AnswerError("transform_llm_output: an answer both replaces the text and stops it; give one")
        return pb.TextResponse(stop=pb.OutputStop(message=v.stop.message))
    return pb.TextResponse(text=v.text)


def _text_replacement(m: pb.TextResponse) -> Optional[t.TextReplacement]:
    if m.HasField("stop"):
        return t.TextReplacement(m.text, t.OutputStop(m.stop.message))
    return t.TextReplacement(m.text) if m.HasField("text") else None


HOOKS: Tuple[HookRow, ...] = (
    _observer(
        "on_session_start",
        "OnSessionStart",
        pb.SessionStart,
        lambda m: t.SessionStart(m.session_id, m.model, m.route),
        lambda v: pb.SessionStart(session_id=v.session_id, model=v.model, route=v.route),
    ),
    _observer(
        "on_session_end",
        "OnSessionEnd",
        pb.SessionEnd,
        lambda m: t.SessionEnd(
            m.session_id, m.model, m.route, m.reason, m.iterations, usage_from(m.usage), m.error
        ),
        lambda v: pb.SessionEnd(
            session_id=v.session_id,
            model=v.model,
            route=v.route,
            reason=v.reason,
            iterations=v.iterations,
            usage=usage_to(v.usage),
            error=v.error,
        ),
    ),
    _answerer(
        "pre_tool_list_finalized",
        "PreToolListFinalized",
        pb.ToolListRequest,
        pb.ToolListResponse,
        lambda m: t.ToolListRequest(
            m.session_id, m.iteration, [tool_spec_from(x) for x in m.tools]
        ),
        lambda v: pb.ToolListRequest(
            session_id=v.session_id,
            iteration=v.iteration,
            tools=[tool_spec_to(x) for x in v.tools],
        ),
        t.ToolListOverride,
        lambda v: pb.ToolListResponse(
            override=pb.ToolList(tools=[tool_spec_to(x) for x in v.tools])
        ),
        lambda m: t.ToolListOverride([tool_spec_from(x) for x in m.override.tools])
        if m.HasField("override")
        else None,
    ),
    _answerer(
        "pre_api_request_mutable",
        "PreApiRequestMutable",
        pb.ApiRequest,
        pb.RequestPatchResponse,
        lambda m: t.APIRequest(m.session_id, m.iteration, model_request_from(m.request)),
        lambda v: pb.ApiRequest(
            session_id=v.session_id, iteration=v.iteration, request=model_request_to(v.request)
        ),
        t.RequestPatch,
        lambda v: pb.RequestPatchResponse(patch=patch_to(v)),
        lambda m: patch_from(m.patch) if m.HasField("patch") else None,
    ),
    _answerer(
        "pre_llm_call_can_provide_response",
        "PreLlmCallCanProvideResponse",
        pb.LlmRequest,
        pb.ModelResponseResponse,
        lambda m: t.LLMRequest(
            m.session_id, m.iteration, m.route, model_request_from(m.request)
        ),
        lambda v: pb.LlmRequest(
            session_id=v.session_id,
            iteration=v.iteration,
            route=v.route,
            request=model_request_to(v.request),
        ),
        t.ModelResponse,
        lambda v: pb.ModelResponseResponse(response=model_response_to(v)),
        lambda m: model_response_from(m.response) if m.HasField("response") else None,
    ),
    _answerer(
        "post_llm_call_can_reissue",
        "PostLlmCallCanReissue",
        pb.LlmCall,
        pb.ReissueResponse,
        lambda m: t.LLMCall(
            m.session_id,
            m.iteration,
            m.route,
            model_request_from(m.request),
            model_response_from(m.response),
            m.partial,
        ),
        lambda v: pb.LlmCall(
            session_id=v.session_id,
            iteration=v.iteration,
            route=v.route,
            request=model_request_to(v.request),
            response=model_response_to(v.response),
            partial=v.partial,
        ),
        t.Reissue,
        lambda v: pb.ReissueResponse(reissue=pb.Reissue(patch=patch_to(v.patch), reason=v.reason)),
        lambda m: t.Reissue(patch_from(m.reissue.patch), m.reissue.reason)
        if m.HasField("reissue")
        else None,
    ),
    _observer(
        "post_llm_call",
        "PostLlmCall",
        pb.Inference,
        lambda m: t.Inference(
            m.session_id,
            m.iteration,
            m.route,
            m.model,
            usage_from(m.usage),
            m.stop_reason,
            m.escalated,
            m.reason,
            m.duration_ns,
            m.error,
            m.provided_by,
        ),
        lambda v: pb.Inference(
            session_id=v.session_id,
            iteration=v.iteration,
            route=v.route,
            model=v.model,
            usage=usage_to(v.usage),
            stop_reason=v.stop_reason,
            escalated=v.escalated,
            reason=v.reason,
            duration_ns=v.duration_ns,
            error=v.error,
            provided_by=v.provided_by,
        ),
    ),
    _answerer(
        "transform_llm_output",
        "TransformLlmOutput",
        pb.LlmOutput,
        pb.TextResponse,
        lambda m: t.LLMOutput(m.session_id, m.text, m.windowed, m.offset, m.overlap, m.last),
        lambda v: pb.LlmOutput(
            session_id=v.session_id,
            text=v.text,
            windowed=v.windowed,
            offset=v.offset,
            overlap=v.overlap,
            last=v.last,
        ),
        t.TextReplacement,
        _text_response,
        _text_replacement,
        coerce=_text_coerce,
    ),
    _answerer(
        "pre_tool_call",
        "PreToolCall",
        pb.ToolCallRequest,
        pb.PreToolCallResponse,
        tool_call_request_from,
        tool_call_request_to,
        t.PreToolCallDecision,
        _decision_to,
        _decision_from,
    ),
    _answerer(
        "pre_tool_call_can_provide_result",
        "PreToolCallCanProvideResult",
        pb.ToolCallRequest,
        pb.ToolResultResponse,
        tool_call_request_from,
        tool_call_request_to,
        t.ToolResult,
        lambda v: pb.ToolResultResponse(result=tool_result_to(v)),
        lambda m: tool_result_from(m.result) if m.HasField("result") else None,
    ),
    _observer("post_tool_call", "PostToolCall", pb.ToolCallOutcome, outcome_from, outcome_to),
    _answerer(
        "transform_tool_result",
        "TransformToolResult",
        pb.ToolCallOutcome,
        pb.ToolResultResponse,
        outcome_from,
        outcome_to,
        t.ToolResult,
        lambda v: pb.ToolResultResponse(result=tool_result_to(v)),
        lambda m: tool_result_from(m.result) if m.HasField("result") else None,
    ),
    _answerer(
        "on_user_message",
        "OnUserMessage",
        pb.UserMessage,
        pb.UserMessageResponse,
        lambda m: t.UserMessage(m.session_id, m.route, m.index, m.text),
        lambda v: pb.UserMessage(session_id=v.session_id, route=v.route, index=v.index, text=v.text),
        t.UserMessageDecision,
        _user_decision_to,
        _user_decision_from,
        coerce=lambda v: t.UserMessageDecision(additional_context=v) if isinstance(v, str) else v,
    ),
    _answerer(
        "post_tool_call_can_add_context",
        "PostToolCallCanAddContext",
        pb.ToolCallOutcome,
        pb.AddedContextResponse,
        outcome_from,
        outcome_to,
        t.AddedContext,
        lambda v: pb.AddedContextResponse(additional_context=v.additional_context),
        lambda m: t.AddedContext(m.additional_context)
        if m.HasField("additional_context")
        else None,
        coerce=lambda v: t.AddedContext(additional_context=v) if isinstance(v, str) else v,
    ),
)

_BY_NAME: Dict[str, HookRow] = {r.name: r for r in HOOKS}


def row_of(name: str) -> Optional[HookRow]:
    """The row of the hook ``name``, or None for a hook this SDK does not know."""
    return _BY_NAME.get(name)
