"""hookhost_plugin: write a hookhost plugin in Python.

A plugin is a class with a method per hook it serves; :func:`serve` runs it
under the host (handshake, AutoMTLS, health, controller, protocol version 1
or 2, leaving with the host)::

    #!/usr/bin/python3
    import hookhost_plugin as hp

    class Guard(hp.Plugin):
        name, version = "guard", "1.0.0"

        def pre_tool_call(self, call):
            if call.name == "delete_everything":
                return hp.block("not here")
            return None  # no opinion

    if __name__ == "__main__":
        hp.serve(Guard())

See README.md beside this package for every hook, typed tools, config,
logging and testing (:mod:`hookhost_plugin.testing`).
"""

# The server's module records the plugin's first parent on import: import
# it first, before anything slow.
try:
    from .server import serve  # noqa: I001
except ImportError as _exc:  # protobuf, which the SDK's own modules import
    if _exc.name is None or _exc.name.split(".")[0] not in ("google", "grpc", "cryptography"):
        raise
    _missing = (
        "hookhost_plugin cannot load: the Python module %r is missing; install Debian's "
        "python3-grpcio, python3-protobuf and python3-cryptography, or run the plugin with "
        "a Python that has them (its #! line must name that interpreter by absolute path)"
        % _exc.name
    )
    import os as _os

    if _os.environ.get("HOOKHOST_PLUGIN"):
        # Started by the host: an hclog line, which it logs at ERROR (the
        # traceback below is plain text, logged at DEBUG).
        import logging as _logging
        import sys as _sys

        from .log import HclogFormatter as _Formatter

        _rec = _logging.LogRecord("plugin", _logging.ERROR, __file__, 0, _missing, (), None)
        _sys.stderr.write(_Formatter("plugin").format(_rec) + "\n")
        _sys.stderr.flush()
    raise ImportError(_missing, name=_exc.name) from _exc
from .config import ConfigError, decode_config
from .log import logger
from .runtime import Cancelled, Context, HookError, Plugin
from .tools import ArgsError, Tool, ToolError, tool
from .types import (
    APIRequest,
    Ask,
    LLMRequest,
    Block,
    Inference,
    LLMCall,
    LLMOutput,
    Message,
    ModelRequest,
    ModelResponse,
    Origin,
    PreToolCallDecision,
    Reissue,
    RequestPatch,
    Role,
    SessionEnd,
    SessionStart,
    TextReplacement,
    OutputStop,
    ToolCall,
    ToolCallOutcome,
    ToolCallRequest,
    ToolListOverride,
    ToolListRequest,
    ToolResult,
    ToolSpec,
    Usage,
    UserMessage,
    UserMessageDecision,
    AddedContext,
    ask,
    block,
    compact_json,
    modify,
)

__version__ = "0.1.0"

__all__ = [
    "serve",
    "Plugin",
    "Context",
    "HookError",
    "Cancelled",
    "Tool",
    "tool",
    "ToolError",
    "ArgsError",
    "decode_config",
    "ConfigError",
    "logger",
    "block",
    "ask",
    "modify",
    "compact_json",
    "APIRequest",
    "Ask",
    "LLMRequest",
    "Block",
    "Inference",
    "LLMCall",
    "LLMOutput",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "Origin",
    "PreToolCallDecision",
    "Reissue",
    "RequestPatch",
    "Role",
    "SessionEnd",
    "SessionStart",
    "TextReplacement",
    "OutputStop",
    "ToolCall",
    "ToolCallOutcome",
    "ToolCallRequest",
    "UserMessage",
    "UserMessageDecision",
    "AddedContext",
    "ToolListOverride",
    "ToolListRequest",
    "ToolResult",
    "ToolSpec",
    "Usage",
]
