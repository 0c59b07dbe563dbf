"""The hook payloads and answers, as dataclasses mirroring the host's Go
types (hooks/types.go), field for field, with the JSON names as attribute
names.

Tool arguments travel as JSON text (``arguments``, a ``str``); ``args``
decodes them. A tool result's ``content`` is JSON text too; see
:meth:`ToolResult.json` and :meth:`ToolResult.as_json`. Durations are whole
nanoseconds (``duration_ns``), as on the wire.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from typing import Any, List, Optional

__all__ = [
    "Role",
    "ToolCall",
    "Message",
    "ToolSpec",
    "Usage",
    "ModelRequest",
    "ModelResponse",
    "ToolResult",
    "SessionStart",
    "SessionEnd",
    "ToolListRequest",
    "ToolListOverride",
    "APIRequest",
    "RequestPatch",
    "LLMRequest",
    "LLMCall",
    "Reissue",
    "Inference",
    "LLMOutput",
    "TextReplacement",
    "OutputStop",
    "Origin",
    "ToolCallRequest",
    "Block",
    "PreToolCallDecision",
    "ToolCallOutcome",
    "UserMessage",
    "UserMessageDecision",
    "AddedContext",
    "block",
    "modify",
    "compact_json",
]


class Role:
    """The four roles of a conversation message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


def compact_json(value: Any) -> str:
    """JSON without spaces, as the host's Go code writes it. NaN and
    infinities are refused (ValueError): JSON has no such numbers."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _decode(text: str) -> Any:
    return json.loads(text) if text else None


@dataclass
class ToolCall:
    """A model's request to run one tool; ``arguments`` is the JSON text the
    model produced, which may be invalid."""

    id: str = ""
    name: str = ""
    arguments: str = ""

    @property
    def args(self) -> Any:
        """The arguments decoded (ValueError when they are not JSON)."""
        return _decode(self.arguments)


@dataclass
class Message:
    """One provider-neutral conversation message."""

    role: str = ""
    content: str = ""
    tool_calls: List[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False


@dataclass
class ToolSpec:
    """A tool offered to the model; ``input_schema`` is a JSON Schema object."""

    name: str = ""
    description: str = ""
    input_schema: Optional[dict] = None


@dataclass
class Usage:
    """Tokens of one or more model calls."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class ModelRequest:
    """The provider-neutral request of one model call."""

    model: str = ""
    system: str = ""
    messages: List[Message] = field(default_factory=list)
    tools: List[ToolSpec] = field(default_factory=list)
    max_tokens: int = 0
    temperature: Optional[float] = None


@dataclass
class ModelResponse:
    """The provider-neutral answer of one model call."""

    model: str = ""
    message: Message = field(default_factory=Message)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""


@dataclass
class ToolResult:
    """What a tool call produced, as the model will see it: ``content`` is
    JSON text, ``is_error`` marks a failed call."""

    content: str = ""
    is_error: bool = False

    @classmethod
    def json(cls, value: Any, is_error: bool = False) -> "ToolResult":
        """A result whose content is ``value`` encoded as JSON."""
        return cls(content=compact_json(value), is_error=is_error)

    @classmethod
    def error(cls, message: str) -> "ToolResult":
        """The error result ``{"error": message}``, as the Go SDK writes it."""
        return cls.json({"error": message}, is_error=True)

    def as_json(self) -> "ToolResult":
        """The host's one rule for a result (ToolResult.AsJSON): content that
        is not JSON is text, and becomes a JSON string holding it. Lone
        surrogates, which UTF-8 cannot carry, first become U+FFFD, as the
        host repairs the same content, so that a transform sees the same
        text whichever side made it JSON."""
        content = self.content.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        try:
            json.loads(content, parse_constant=_no_constant)
            return self if content == self.content else ToolResult(content=content, is_error=self.is_error)
        except ValueError:
            return ToolResult(content=json.dumps(content, ensure_ascii=False), is_error=self.is_error)


def _no_constant(name: str) -> Any:
    raise ValueError("%s is not JSON" % name)


@dataclass
class SessionStart:
    """Payload of on_session_start."""

    session_id: str = ""
    model: str = ""
    route: str = ""


@dataclass
class SessionEnd:
    """Payload of on_session_end. ``reason``: completed, max_iterations,
    error or cancelled."""

    session_id: str = ""
    model: str = ""
    route: str = ""
    reason: str = ""
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str = ""


@dataclass
class ToolListRequest:
    """Payload of pre_tool_list_finalized."""

    session_id: str = ""
    iteration: int = 0
    tools: List[ToolSpec] = field(default_factory=list)


@dataclass
class ToolListOverride:
    """Answer of pre_tool_list_finalized: the tool list for this model call."""

    tools: List[ToolSpec] = field(default_factory=list)


@dataclass
class APIRequest:
    """Payload of pre_api_request_mutable."""

    session_id: str = ""
    iteration: int = 0
    request: ModelRequest = field(default_factory=ModelRequest)


@dataclass
class LLMRequest:
    """Payload of pre_llm_call_can_provide_response: the request of one
    model call as it will go upstream. Answer with a ``ModelResponse``
    (an assistant message with text or tool calls) to answer instead of
    the model, or None to let the model answer."""

    session_id: str = ""
    iteration: int = 0
    route: str = ""
    request: ModelRequest = field(default_factory=ModelRequest)


@dataclass
class RequestPatch:
    """Overrides fields of a ModelRequest; None leaves a field alone."""

    model: Optional[str] = None
    system: Optional[str] = None
    messages: Optional[List[Message]] = None
    tools: Optional[List[ToolSpec]] = None
    max_tokens: Optional[int] = None
    temperature: Optional[float] = None


@dataclass
class LLMCall:
    """Payload of post_llm_call_can_reissue."""

    session_id: str = ""
    iteration: int = 0
    route: str = ""
    request: ModelRequest = field(default_factory=ModelRequest)
    response: ModelResponse = field(default_factory=ModelResponse)
    # The response's text is only the opening of a streamed answer (the
    # plugin declared decide_after_bytes); tool calls, usage and stop
    # reason are not known yet.
    partial: bool = False


@dataclass
class Reissue:
    """Answer of post_llm_call_can_reissue: make the call again, patched."""

    patch: RequestPatch = field(default_factory=RequestPatch)
    reason: str = ""


@dataclass
class Inference:
    """Payload of post_llm_call."""

    session_id: str = ""
    iteration: int = 0
    route: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    escalated: bool = False
    reason: str = ""
    duration_ns: int = 0
    error: str = ""
    # The plugin that answered instead of the model
    # (pre_llm_call_can_provide_response); empty when the model did.
    provided_by: str = ""

    @property
    def duration(self) -> datetime.timedelta:
        """The call's duration (to the microsecond)."""
        return datetime.timedelta(microseconds=self.duration_ns // 1000)


@dataclass
class LLMOutput:
    """Payload of transform_llm_output: the final answer text, or one
    window of a streamed answer (``windowed``; the plugin declared
    ``window_bytes`` in ``hook_options``). None of a window's text has
    reached the client; its first ``overlap`` characters' bytes repeat the
    previous window's held-back end, ``offset`` is where it starts in the
    answer as released, ``last`` says the answer ends with it. A
    replacement replaces the whole window."""

    session_id: str = ""
    text: str = ""
    windowed: bool = False
    offset: int = 0
    overlap: int = 0
    last: bool = False


@dataclass
class OutputStop:
    """Answer of transform_llm_output that ends the answer: ``message`` is
    shown instead of what was not released yet, and the answer ends with
    the protocol's refusal form."""

    message: str = ""


@dataclass
class TextReplacement:
    """Answer of transform_llm_output: replacement text, or ``stop``."""

    text: str = ""
    stop: Optional[OutputStop] = None


class Origin:
    """Where a tool call goes (``origin`` of ToolCallRequest and
    ToolCallOutcome): a native tool of the host, a plugin's tool, a tool the
    gateway's client runs itself, or a tool of the configured MCP server
    NAME (``mcp:NAME``). Matchers still match the tool's name."""

    NATIVE = "native"
    PLUGIN = "plugin"
    CLIENT = "client"
    MCP_PREFIX = "mcp:"

    @staticmethod
    def mcp(server: str) -> str:
        """The origin of a tool of the configured MCP server ``server``."""
        return Origin.MCP_PREFIX + server

    @staticmethod
    def mcp_server(origin: str) -> Optional[str]:
        """The MCP server of an ``mcp:NAME`` origin, else None."""
        if origin.startswith(Origin.MCP_PREFIX) and len(origin) > len(Origin.MCP_PREFIX):
            return origin[len(Origin.MCP_PREFIX) :]
        return None


@dataclass
class ToolCallRequest:
    """Payload of pre_tool_call and pre_tool_call_can_provide_result.
    ``origin``: where the call goes (see :class:`Origin`)."""

    session_id: str = ""
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    origin: str = ""

    @property
    def args(self) -> Any:
        """The arguments decoded (ValueError when they are not JSON)."""
        return _decode(self.arguments)


@dataclass
class Block:
    """Stops a tool call; ``message`` tells the model why."""

    message: str = ""


@dataclass
class Ask:
    """Holds a tool call until a person approves it; ``reason`` tells them
    why. Denied, or with no one to ask, the call is blocked with the reason."""

    reason: str = ""


@dataclass
class PreToolCallDecision:
    """Answer of pre_tool_call: a block, an ask, or replacement arguments (a
    JSON object: a dict, or its JSON text); at most one of the three."""

    block: Optional[Block] = None
    modified_args: Any = None
    ask: Optional[Ask] = None


def block(message: str) -> PreToolCallDecision:
    """A pre_tool_call answer that blocks the call with ``message``."""
    return PreToolCallDecision(block=Block(message=message))


def ask(reason: str) -> PreToolCallDecision:
    """A pre_tool_call answer that holds the call for a person's approval."""
    return PreToolCallDecision(ask=Ask(reason=reason))


def modify(args: Any) -> PreToolCallDecision:
    """A pre_tool_call answer that replaces the call's arguments."""
    return PreToolCallDecision(modified_args=args)


@dataclass
class UserMessage:
    """Payload of on_user_message: a new user message, before the first
    model call of its turn. ``index`` is its place in the conversation's
    messages."""

    session_id: str = ""
    route: str = ""
    index: int = 0
    text: str = ""


@dataclass
class UserMessageDecision:
    """Answer of on_user_message: a block (its message is the turn's
    answer, and the model is not called), or context the model sees beside
    the user's message, never both."""

    block: Optional[Block] = None
    additional_context: str = ""


@dataclass
class AddedContext:
    """Answer of post_tool_call_can_add_context: text the model sees after
    the tool's result."""

    additional_context: str = ""


@dataclass
class ToolCallOutcome:
    """Payload of post_tool_call, transform_tool_result and
    post_tool_call_can_add_context. ``status``: ok, error, blocked or
    provided_by:<plugin>; ``origin``: where the call went (see
    :class:`Origin`)."""

    session_id: str = ""
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    result: ToolResult = field(default_factory=ToolResult)
    status: str = ""
    duration_ns: int = 0
    origin: str = ""

    @property
    def args(self) -> Any:
        """The arguments decoded (ValueError when they are not JSON)."""
        return _decode(self.arguments)

    @property
    def duration(self) -> datetime.timedelta:
        """The call's duration (to the microsecond)."""
        return datetime.timedelta(microseconds=self.duration_ns // 1000)
