"""Serving a plugin under the host: go-plugin's handshake, AutoMTLS, the
health and controller services, protocol version 1 or 2, and leaving with
the host. See PROTOCOL.md at the top of the repository for the contract
this implements.
"""

from __future__ import annotations

import base64
import concurrent.futures
import datetime
import json
import logging
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import convert
from . import log as hlog
from ._lane import Lane, take_lane
from ._proto import grpc_controller_pb2 as ctlpb
from ._proto import health_pb2 as healthpb
from ._proto import plugin_pb2 as pb
from ._proto import pluginv2_pb2 as pb2
from .runtime import (
    BAD_REQUEST,
    CANCELLED,
    DEADLINE_EXCEEDED,
    ERROR,
    MAX_IN_FLIGHT,
    PANIC,
    Adapted,
    Context,
    Failure,
    HookStream,
)

__all__ = ["serve", "MAGIC_COOKIE_KEY", "MAGIC_COOKIE_VALUE", "negotiate"]

# Recorded when the SDK is imported, before anything slow, so that a host
# that dies while the plugin starts is still seen to go.
FIRST_PARENT = os.getppid()

MAGIC_COOKIE_KEY = "HOOKHOST_PLUGIN"
MAGIC_COOKIE_VALUE = "d3c1b0a2-hookhost-plugin-v1"


def _protect_environ() -> str:
    """Make a plugin the host launched unreadable to other processes of its
    user, as the host makes itself (Linux: prctl(PR_SET_DUMPABLE, 0)): its
    entry's env list can hand it secrets, which every other plugin running
    as the same user could otherwise read in /proc/<pid>/environ. Done at
    import, as early as the SDK can. Returns why it could not, "" if it did
    or had nothing to do (not Linux, not launched by the host)."""
    if not sys.platform.startswith("linux") or os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        return ""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
            return os.strerror(ctypes.get_errno())
    except Exception as exc:  # no ctypes, no libc: say so, serve anyway
        return str(exc)
    return ""


_PROTECT_ERROR = _protect_environ()


def _take_lane() -> Tuple[Any, str]:
    """The lane the host handed a process it launched, taken at import,
    before the plugin's own code can start a child that would inherit it
    (see _lane.take_lane); why it could not be taken, "" if it was or the
    host handed none."""
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        return None, ""
    return take_lane()


_LANE_SOCKET, _LANE_ERROR = _take_lane()

CORE_PROTOCOL = 1  # go-plugin's own
PROTOCOLS = (1, 2)  # hookhost.plugin.v1 and v2, oldest first
HOST_PID_ENV = "HOOKHOST_HOST_PID"
PARENT_POLL_SECONDS = 0.25
# The most the host may send (wire.MaxMessageSize): a call it was allowed to
# send must not be refused here and blamed on the plugin.
MAX_MESSAGE_SIZE = 256 << 20
# Threads for gRPC's own handlers (unary calls of version 1, health,
# controller, and one per open Hooks stream), for version 2's calls, and for
# stretch stages. Threads start as needed: an idle plugin holds few.
GRPC_WORKERS = 64
CALL_WORKERS = 64
STAGE_WORKERS = 64

_log = logging.getLogger("hookhost_plugin")

# Launched by the host, stdout carries the handshake line and nothing else:
# from the moment the SDK is imported (a plugin's first lines), a print goes
# to stderr, where the host logs it at DEBUG, instead of being taken for a
# broken handshake.
_HANDSHAKE_OUT = sys.stdout
_REDIRECTED = os.environ.get(MAGIC_COOKIE_KEY) == MAGIC_COOKIE_VALUE and sys.stdout is not None
if _REDIRECTED:
    sys.stdout = sys.stderr
    # So are its logs: what it logs at import or in its constructor, before
    # serve() names it, is an hclog line at its level, not plain text the
    # host logs at DEBUG (or an INFO Python drops).
    hlog.install("plugin")


class _Exit(Exception):
    pass


def negotiate(offered: str) -> int:
    """The app protocol version to speak, from PLUGIN_PROTOCOL_VERSIONS:
    the highest this SDK and the host share; 1 when the host names none
    (a go-plugin host always does). Raises ValueError when none is shared."""
    if not offered.strip():
        return 1
    versions = set()
    for part in offered.split(","):
        part = part.strip()
        if part.isdigit():
            versions.add(int(part))
    common = [v for v in PROTOCOLS if v in versions]
    if not common:
        raise ValueError(
            "the host offers protocol versions %s; this plugin speaks %s"
            % (offered, ", ".join(str(v) for v in PROTOCOLS))
        )
    return max(common)


# --- leaving with the host ---------------------------------------------------


def _host_gone(named: int) -> bool:
    """Whether the host is gone (see the Go SDK's hostGone): a named host
    is gone when its pid no longer exists, or when it was the first parent
    and the plugin was re-parented; without a name, when the parent changed."""
    ppid = os.getppid()
    if named <= 0:
        return ppid != FIRST_PARENT
    if named == FIRST_PARENT and ppid != FIRST_PARENT:
        return True
    try:
        os.kill(named, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass  # it exists, under another user
    return False


# The directory of the plugin's socket, once made.
_sock_dir = ""


def _leave(reason: str, host: int) -> None:
    """Exit at once, taking the plugin's children along when it leads its
    process group (the host starts it so). May run in a signal handler, so
    it writes with os.write and nothing can stop the exit."""
    line = json.dumps(
        {
            "@level": "warn",
            "@message": reason + "; exiting",
            "@module": hlog._plugin_name,
            "@timestamp": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%S.%f"
            )
            + "Z",
            "host_pid": host,
        }
    )
    try:
        os.write(2, (line + "\n").encode())
    except Exception:
        pass
    if _sock_dir:
        # The socket's directory would outlive the process: no one else
        # removes it once the host is gone.
        shutil.rmtree(_sock_dir, ignore_errors=True)
    try:
        _kill_own_cgroup()
        if os.getpgrp() == os.getpid():
            _kill_group()
    finally:
        os._exit(0)


CGROUP_ENV = "HOOKHOST_CGROUP"


def _kill_own_cgroup() -> None:
    """Kill the cgroup the host started the plugin in (Linux, cgroup v2),
    and with it everything the plugin spawned, even children that left its
    process group with setsid. Only when the plugin is in the cgroup
    HOOKHOST_CGROUP names, so a stale variable kills nothing else."""
    path = os.environ.get(CGROUP_ENV, "")
    if not path:
        return
    try:
        with open("/proc/self/cgroup") as f:
            own = [l[3:].strip() for l in f if l.startswith("0::")]
        if own and own[0] != "/" and os.path.normpath(path).endswith(os.path.normpath(own[0])):
            with open(os.path.join(path, "cgroup.kill"), "w") as f:
                f.write("1")
    except OSError:
        pass  # the group kill that follows is all that is left


def _kill_group() -> None:
    """SIGKILL every other member of the plugin's process group: the
    plugin itself exits 0, as README.md promises."""
    me = os.getpid()
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        pids = []
    if not pids:
        # No /proc: the group is sent SIGTERM, which the plugin itself
        # ignores from now on.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.killpg(0, signal.SIGTERM)
        return
    for pid in pids:
        if pid == me:
            continue
        try:
            if os.getpgid(pid) == me:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass  # gone already, or not ours


def watch_host() -> None:
    """Exit when the host is gone, however it went: HOOKHOST_HOST_PID names
    it, else the first parent; SIGTERM (the host's parent-death signal on
    Linux) ends the plugin the same way."""
    raw = os.environ.get(HOST_PID_ENV, "")
    named = int(raw) if raw.isdigit() else 0
    host = named if named > 0 else FIRST_PARENT
    signal.signal(
        signal.SIGTERM,
        lambda *_: _leave("received SIGTERM (the host is gone or asked the plugin to stop)", host),
    )
    if _host_gone(named):
        _leave("the host process died before the plugin was serving", host)

    def loop() -> None:
        while not _host_gone(named):
            time.sleep(PARENT_POLL_SECONDS)
        _leave("the host process %d is gone" % host, host)

    threading.Thread(target=loop, name="hookhost-host-watch", daemon=True).start()


# --- AutoMTLS ----------------------------------------------------------------


def server_certificate(name: str) -> Tuple[bytes, bytes, bytes]:
    """A throwaway self-signed certificate as go-plugin's AutoMTLS wants it:
    the host pins it as its only root and dials server name "localhost", so
    it is valid for localhost (SAN), a CA, and allows server auth. Returns
    (key PEM, certificate PEM, certificate DER)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "hookhost plugin " + name),
        ]
    )
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=True,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return (
        key_pem,
        cert.public_bytes(serialization.Encoding.PEM),
        cert.public_bytes(serialization.Encoding.DER),
    )


def handshake_line(app_protocol: int, socket_path: str, cert_der: bytes) -> str:
    """go-plugin's handshake line: the certificate is UNPADDED standard
    base64 of its DER (go-plugin decodes with RawStdEncoding; padding fails
    whenever the DER's length is not a multiple of 3)."""
    cert = base64.b64encode(cert_der).decode("ascii").rstrip("=")
    return "%d|%d|unix|%s|grpc|%s\n" % (CORE_PROTOCOL, app_protocol, socket_path, cert)


# --- services ----------------------------------------------------------------


def _abort(grpc: Any, context: Any, f: Failure) -> None:
    codes = {
        pb2.Failure.ERROR: grpc.StatusCode.UNKNOWN,
        pb2.Failure.PANIC: grpc.StatusCode.INTERNAL,
        pb2.Failure.DEADLINE_EXCEEDED: grpc.StatusCode.DEADLINE_EXCEEDED,
        pb2.Failure.CANCELLED: grpc.StatusCode.CANCELLED,
        pb2.Failure.UNKNOWN_HOOK: grpc.StatusCode.UNIMPLEMENTED,
        pb2.Failure.BAD_REQUEST: grpc.StatusCode.INVALID_ARGUMENT,
    }
    if f.kind == PANIC:
        # INTERNAL is also gRPC's own code: the trailer says it was the
        # handler's, as version 2's PANIC does.
        context.set_trailing_metadata((("hookhost-failure", "panic"),))
    context.abort(codes.get(f.kind, grpc.StatusCode.UNKNOWN), f.message)


def _raw(data: bytes) -> bytes:
    # Not None: grpc takes a None request for a failed deserialization.
    return data


def _describe_configure(grpc: Any, p: Adapted, lane: Optional[Lane] = None) -> dict:
    def describe(_req: bytes, context: Any) -> bytes:
        m = p.manifest()
        # Only while the lane is served: one that has ended already would
        # have the host send its calls where no one reads them.
        m.lane = lane is not None and not lane.ended
        return m.SerializeToString()

    def configure(req: bytes, context: Any) -> bytes:
        unserved: List[str] = []
        try:
            unserved = p.configure_json(pb.ConfigureRequest.FromString(req).config_json)
        except Failure as f:
            _abort(grpc, context, f)
        except Exception as exc:
            _abort(grpc, context, Failure(BAD_REQUEST, "undecodable Configure request: %s" % exc))
        return pb.ConfigureResponse(unserved_hooks=unserved).SerializeToString()

    return {
        "Describe": grpc.unary_unary_rpc_method_handler(
            describe, request_deserializer=_raw, response_serializer=_raw
        ),
        "Configure": grpc.unary_unary_rpc_method_handler(
            configure, request_deserializer=_raw, response_serializer=_raw
        ),
    }


def v1_service(
    grpc: Any,
    p: Adapted,
    calls: concurrent.futures.Executor,
    max_in_flight: int = MAX_IN_FLIGHT,
) -> Any:
    """hookhost.plugin.v1.Plugin: one unary RPC per hook. A hook the plugin
    does not serve answers no opinion, as the Go SDK's does.

    Handlers run on ``calls``, at most ``max_in_flight`` at once, each
    waited for no longer than its deadline: gRPC's own threads stay free
    for health checks and the controller, which the host needs to stop or
    restart a plugin whose handlers hang."""
    handlers = _describe_configure(grpc, p)
    lock = threading.Lock()
    running = [0]

    def finished(_: Any) -> None:
        with lock:
            running[0] -= 1

    for row in convert.HOOKS:

        def handle(req: bytes, context: Any, row: convert.HookRow = row) -> bytes:
            remaining = context.time_remaining()
            ctx = Context(
                row.name, remaining if remaining is not None and remaining < 1e8 else None
            )
            ctx.carrier = "grpc"
            with lock:
                full = running[0] >= max_in_flight
                if not full:
                    running[0] += 1
            if full:
                _abort(
                    grpc,
                    context,
                    Failure(
                        ERROR,
                        "the plugin is already running %d hook calls; it answers no more "
                        "until some finish" % max_in_flight,
                    ),
                )
            done = threading.Event()
            # The RPC ends early only when the host cancels it or its
            # deadline passes: the handler sees that as its context ending.
            context.add_callback(lambda: (ctx.cancel("cancelled"), done.set()))
            try:
                fut = calls.submit(p.call_wire, row, req, ctx)
            except RuntimeError:
                finished(None)
                _abort(grpc, context, Failure(CANCELLED, "%s: the plugin is stopping" % row.name))
            fut.add_done_callback(finished)
            fut.add_done_callback(lambda _: done.set())
            done.wait(ctx.remaining())
            if not fut.done():
                reason = ctx.reason
                if reason == "cancelled":
                    _abort(grpc, context, Failure(CANCELLED, "%s: context canceled" % row.name))
                _abort(
                    grpc,
                    context,
                    Failure(DEADLINE_EXCEEDED, "%s: context deadline exceeded" % row.name),
                )
            try:
                return fut.result()
            except Failure as f:
                _abort(grpc, context, f)
            return b""  # not reached: abort raises

        handlers[row.method] = grpc.unary_unary_rpc_method_handler(
            handle, request_deserializer=_raw, response_serializer=_raw
        )
    return grpc.method_handlers_generic_handler("hookhost.plugin.v1.Plugin", handlers)


# How many answers a Hooks stream holds for a host that does not read
# them: past it a handler's send waits, and so, once every call slot is
# taken, does the stream's reader, so that gRPC's flow control pushes
# back on the host as Go's blocking Send does.
OUTBOX_SIZE = 8


class _Outbox:
    """A bounded queue of a stream's answers: put waits for room until the
    stream is over, then drops the answer; get drains what is left."""

    def __init__(self, size: int = OUTBOX_SIZE) -> None:
        self._items: "queue.Queue[Optional[bytes]]" = queue.Queue(maxsize=size)
        self._over = threading.Event()

    def put(self, item: bytes) -> None:
        while not self._over.is_set():
            try:
                self._items.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def close(self) -> None:
        """End the stream: wake get with None, drop what put waits with."""
        self._over.set()
        try:
            self._items.put_nowait(None)
        except queue.Full:
            pass  # get sees _over once it has taken an item

    def get(self) -> Optional[bytes]:
        """The next answer; None once the stream is over and none is left."""
        while True:
            try:
                # close() wakes it with None; the timeout only covers a
                # close that found the queue full.
                return self._items.get(timeout=1.0)
            except queue.Empty:
                if self._over.is_set():
                    return None


def v2_service(
    grpc: Any,
    p: Adapted,
    calls: concurrent.futures.Executor,
    stages: concurrent.futures.Executor,
    lane: Optional[Lane] = None,
) -> Tuple[Any, Callable[[], None]]:
    """hookhost.plugin.v2.Plugin: Describe, Configure and the Hooks stream;
    ``lane``, when given, is the lane being served, which the manifest then
    announces. Also returns what ends every open stream, the lane's too,
    for a shutdown: a stream ends only when the host closes it, and a
    graceful stop would otherwise wait for it until its grace ran out."""
    handlers = _describe_configure(grpc, p, lane)
    lock = threading.Lock()
    open_streams: Dict[HookStream, _Outbox] = {}

    def close_all() -> None:
        with lock:
            streams = list(open_streams.items())
        for stream, out in streams:
            stream.close()
            out.close()
        if lane is not None:
            lane.close()

    def hooks(requests: Iterator[bytes], context: Any) -> Iterator[bytes]:
        out = _Outbox()
        stream = HookStream(
            p, lambda m: out.put(m.SerializeToString()), calls, stages, carrier="grpc"
        )
        with lock:
            open_streams[stream] = out

        def read() -> None:
            try:
                for data in requests:
                    try:
                        m = pb2.HostMessage.FromString(data)
                    except Exception as exc:
                        _log.warning(
                            "the host sent an undecodable message on the hook stream",
                            extra={"hookhost": {"error": str(exc)}},
                        )
                        continue
                    stream.receive(m)
            except Exception:
                pass  # the host closed the stream or went away
            finally:
                stream.close()
                out.close()

        threading.Thread(target=read, name="hookhost-hooks-reader", daemon=True).start()
        try:
            while True:
                item = out.get()
                if item is None:
                    return
                yield item
        finally:
            stream.close()
            out.close()
            with lock:
                open_streams.pop(stream, None)

    handlers["Hooks"] = grpc.stream_stream_rpc_method_handler(
        hooks, request_deserializer=_raw, response_serializer=_raw
    )
    return grpc.method_handlers_generic_handler("hookhost.plugin.v2.Plugin", handlers), close_all


def health_service(grpc: Any) -> Any:
    """grpc.health.v1.Health/Check: SERVING for "plugin" (what go-plugin
    asks) and "" (the server as a whole)."""

    def check(req: bytes, context: Any) -> bytes:
        service = healthpb.HealthCheckRequest.FromString(req).service
        if service not in ("", "plugin"):
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service %r" % service)
        return healthpb.HealthCheckResponse(
            status=healthpb.HealthCheckResponse.SERVING
        ).SerializeToString()

    return grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health",
        {
            "Check": grpc.unary_unary_rpc_method_handler(
                check, request_deserializer=_raw, response_serializer=_raw
            )
        },
    )


def controller_service(grpc: Any, shutdown: Callable[[str], None]) -> Any:
    """plugin.GRPCController/Shutdown: answer, then stop gracefully."""

    def handle(_req: bytes, _context: Any) -> bytes:
        # Answer first, stop after: the host waits for this reply.
        threading.Thread(
            target=shutdown, args=("the host asked the plugin to shut down",), daemon=True
        ).start()
        return ctlpb.Empty().SerializeToString()

    return grpc.method_handlers_generic_handler(
        "plugin.GRPCController",
        {
            "Shutdown": grpc.unary_unary_rpc_method_handler(
                handle, request_deserializer=_raw, response_serializer=_raw
            )
        },
    )


# --- serve ---------------------------------------------------------------------


def serve(plugin: Any) -> None:
    """Run ``plugin`` as a plugin process and never return: exit 0 when the
    host shuts it down (or is gone), 1 when it cannot start.

    Started by hand (no magic cookie), it says what it is and exits 1.
    Otherwise it watches the host, checks the manifest, negotiates the
    protocol version (2 when the host offers it, else 1), serves gRPC over
    TLS on a unix socket, prints the handshake line, and from then on sends
    anything printed to stdout to stderr instead.
    """
    handshake_out = _HANDSHAKE_OUT if _REDIRECTED else sys.stdout
    # stdout carries the handshake and nothing else, not even a print in the
    # plugin's constructor or a library's import.
    sys.stdout = sys.stderr
    try:
        code = _serve(plugin, handshake_out)
    except _Exit as exc:
        code = int(str(exc))
    sys.stderr.flush()
    os._exit(code)


DEBUG_ENV = "HOOKHOST_PLUGIN_DEBUG"
REATTACH_ENV = "HOOKHOST_REATTACH_PLUGINS"


def _debug_mode() -> bool:
    """Whether to serve in debug mode: HOOKHOST_PLUGIN_DEBUG set to a true
    value (as Go's strconv.ParseBool reads it), and no magic cookie. A
    plugin the host launched never does, even with the variable passed
    through: it would print a reattach line instead of the handshake."""
    on = os.environ.get(DEBUG_ENV, "") in ("1", "t", "T", "true", "TRUE", "True")
    if on and os.environ.get(MAGIC_COOKIE_KEY) == MAGIC_COOKIE_VALUE:
        sys.stderr.write(
            "%s is set, but the host launched this plugin: serving normally\n" % DEBUG_ENV
        )
        return False
    return on


def reattach_line(name: str, version: int, sock: str) -> str:
    """The line that attaches a host to a plugin serving in debug mode."""
    cfg = {
        name: {
            "Protocol": "grpc",
            "ProtocolVersion": version,
            "Pid": os.getpid(),
            "Test": True,
            "Addr": {"Network": "unix", "String": sock},
        }
    }
    # Single-quoted for a POSIX shell; a quote inside is closed, escaped
    # and reopened.
    js = json.dumps(cfg, separators=(",", ":")).replace("'", "'\\''")
    return "%s='%s'\n" % (REATTACH_ENV, js)


_MISSING_MODULE = (
    "%s cannot start: a Python module is missing; install Debian's python3-grpcio, "
    "python3-protobuf and python3-cryptography, or run the plugin with a Python "
    "that has them (its #! line must name that interpreter by absolute path)"
)


def _serve(plugin: Any, handshake_out: Any) -> int:
    name = getattr(plugin, "name", "") or "plugin"
    debug = _debug_mode()
    if not debug and os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        sys.stderr.write(
            "This is a hookhost plugin (%s). The host starts it; it does not run by hand.\n"
            'Enable it in hookhost.toml: plugins.enabled = ["%s"] and\n'
            'plugins.entries.%s.path = "<absolute path of this script>", then run\n'
            "`hookhost plugins check` to try it. To debug it, start it with %s=1\n"
            "and attach the host to it with the line it prints.\n" % (name, name, name, DEBUG_ENV)
        )
        return 1
    if not debug:
        watch_host()
        # A Ctrl-C in the host's terminal reaches the whole process group;
        # the host decides when its plugins stop, as go-plugin does for Go
        # plugins.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    hlog.install(name, text=debug)
    if _PROTECT_ERROR:
        _log.warning(
            "cannot make the plugin's memory and environment unreadable to other processes of its user",
            extra={"hookhost": {"error": _PROTECT_ERROR}},
        )
    if _LANE_ERROR:
        _log.warning(
            "the plugin cannot serve the host's lane; its hook calls come on gRPC",
            extra={"hookhost": {"error": _LANE_ERROR}},
        )
    try:
        import grpc
    except ImportError as exc:
        _log.error(
            _MISSING_MODULE,
            name,
            extra={"hookhost": {"error": str(exc), "python": sys.executable}},
        )
        return 1

    try:
        p = Adapted(plugin)
        p.validate()
    except Exception as exc:
        _log.error("plugin cannot start: invalid plugin", extra={"hookhost": {"error": str(exc)}})
        return 1
    offered = os.environ.get("PLUGIN_PROTOCOL_VERSIONS", "")
    if debug and not offered.strip():
        offered = ",".join(str(v) for v in PROTOCOLS)  # by hand: the highest
    try:
        version = negotiate(offered)
    except ValueError as exc:
        _log.error("plugin cannot start: %s", exc)
        return 1
    client_cert = os.environ.get("PLUGIN_CLIENT_CERT", "").encode()
    if not debug and not client_cert:
        _log.error(
            "plugin cannot start: PLUGIN_CLIENT_CERT is not set; the host must start plugins "
            "with go-plugin's AutoMTLS on"
        )
        return 1

    sock_dir = tempfile.mkdtemp(
        prefix="hookhost-%s-" % name, dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None
    )
    global _sock_dir
    _sock_dir = sock_dir
    sock = os.path.join(sock_dir, "plugin.sock")
    server = grpc.server(
        concurrent.futures.ThreadPoolExecutor(max_workers=GRPC_WORKERS, thread_name_prefix="grpc"),
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_SIZE),
            ("grpc.max_send_message_length", MAX_MESSAGE_SIZE),
        ],
    )
    calls = concurrent.futures.ThreadPoolExecutor(
        max_workers=CALL_WORKERS, thread_name_prefix="hook"
    )
    stages = concurrent.futures.ThreadPoolExecutor(
        max_workers=STAGE_WORKERS, thread_name_prefix="stage"
    )
    close_streams: Callable[[], None] = lambda: None
    lane: Optional[Lane] = None
    if version == 2 and _LANE_SOCKET is not None:
        # Read before the server starts: the host may send a call on it as
        # soon as Describe has answered.
        lane = Lane(_LANE_SOCKET, p, stages, MAX_MESSAGE_SIZE).start()
    elif _LANE_SOCKET is not None:
        # Version 1 has no lane: the host closes its end after Describe.
        _LANE_SOCKET.close()
    if version == 2:
        service, close_streams = v2_service(grpc, p, calls, stages, lane)
        server.add_generic_rpc_handlers([service])
    else:
        server.add_generic_rpc_handlers([v1_service(grpc, p, calls)])
    server.add_generic_rpc_handlers([health_service(grpc)])

    stopping = threading.Event()

    def stop(reason: str) -> None:
        if stopping.is_set():
            return
        stopping.set()
        _log.debug("%s stopping", name, extra={"hookhost": {"reason": reason}})
        close_streams()
        server.stop(grace=1).wait()

    server.add_generic_rpc_handlers([controller_service(grpc, stop)])

    if not debug:
        # Apart from the socket: a missing cryptography is no socket problem.
        try:
            key_pem, cert_pem, cert_der = server_certificate(name)
        except ImportError as exc:
            _log.error(
                _MISSING_MODULE,
                name,
                extra={"hookhost": {"error": str(exc), "python": sys.executable}},
            )
            shutil.rmtree(sock_dir, ignore_errors=True)
            return 1
    try:
        if debug:
            # Debug mode has no client certificate to check: the host
            # attaches without TLS, as to a Go plugin in go-plugin's test
            # mode.
            server.add_insecure_port("unix:" + sock)
        else:
            # Only the host, holding the key of PLUGIN_CLIENT_CERT, may connect.
            creds = grpc.ssl_server_credentials(
                [(key_pem, cert_pem)], root_certificates=client_cert, require_client_auth=True
            )
            server.add_secure_port("unix:" + sock, creds)
        server.start()
    except Exception as exc:
        _log.error(
            "plugin cannot start: cannot listen on its socket",
            extra={"hookhost": {"socket": sock, "error": str(exc)}},
        )
        shutil.rmtree(sock_dir, ignore_errors=True)
        return 1

    if debug:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(
                sig,
                lambda *_: threading.Thread(
                    target=stop, args=("interrupted",), daemon=True
                ).start(),
            )
        handshake_out.write(reattach_line(name, version, sock))
        handshake_out.flush()
        sys.stderr.write(
            "plugin %s is serving in debug mode (protocol version %d, pid %d); start hookhost "
            "with the line above in its environment; Ctrl-C stops it\n"
            % (name, version, os.getpid())
        )
        sys.stderr.flush()
    else:
        handshake_out.write(handshake_line(version, sock, cert_der))
        handshake_out.flush()
    # From now on file descriptor 1 is stderr too, so that what bypasses
    # sys.stdout (os.write(1, ...), a C extension, a child process) cannot
    # write after the handshake line either.
    try:
        os.dup2(2, 1)
    except OSError:
        pass
    _log.debug(
        "%s serving",
        name,
        extra={"hookhost": {"socket": sock, "pid": os.getpid(), "protocol": version}},
    )
    server.wait_for_termination()
    shutil.rmtree(sock_dir, ignore_errors=True)
    return 0
