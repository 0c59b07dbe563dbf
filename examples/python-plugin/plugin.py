#!/usr/bin/python3
"""pyshout: a hookhost plugin written in Python.

It shows that a plugin needs no Go and no hookhost SDK: only the protocol in
plugins/proto/v1/plugin.proto (compiled to plugin_pb2.py by protoc) and
go-plugin's contract, implemented by hand below:

  1. the host starts this file with a magic cookie in the environment;
  2. the plugin serves gRPC over TLS on a unix socket and prints ONE line on
     stdout, the handshake:  1|1|unix|<socket path>|grpc|<server cert>
  3. it answers grpc.health.v1.Health ("plugin" is SERVING) and
     plugin.GRPCController/Shutdown, after which it exits;
  4. it exits on its own when the host process goes away.

The interpreter is /usr/bin/python3 on purpose: the host starts plugins with
a scrubbed environment (no PATH, no virtualenv), and Debian's packages
python3-grpcio, python3-protobuf and python3-cryptography live there.

What pyshout does, as a plugin:
  - declares the tool pyshout__echo and answers it itself
    (pre_tool_call_can_provide_result);
  - on pre_tool_call for its tool, blocks a call without text and, when
    shout is on, rewrites the arguments to upper case;
  - on transform_llm_output, appends a signature to the final answer.
"""

import base64
import concurrent.futures
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback

# Recorded before anything slow (importing grpc, making a key), so that a
# host that dies while the plugin is still starting is noticed too. On Linux
# the host also has the kernel send SIGTERM when it dies, from the first
# instruction on (the parent-death signal survives exec); see leave().
PARENT_PID = os.getppid()

# stdout carries the handshake and nothing else: keep a handle on it, and
# send every other print, ours or a library's, to stderr.
HANDSHAKE_OUT = sys.stdout
sys.stdout = sys.stderr

# Importing plugin_pb2 would otherwise leave a __pycache__ beside it, in a
# directory that may be read-only or under version control.
sys.dont_write_bytecode = True

NAME = "pyshout"
VERSION = "0.1.0"
MAGIC_COOKIE_KEY = "HOOKHOST_PLUGIN"
MAGIC_COOKIE_VALUE = "d3c1b0a2-hookhost-plugin-v1"
CORE_PROTOCOL = 1  # go-plugin's own protocol
APP_PROTOCOL = 1  # hookhost.plugin.v1
PARENT_POLL_SECONDS = 0.25
MAX_MESSAGE_SIZE = 256 << 20  # what the host may send at most (wire.MaxMessageSize)
HOST_PID_ENV = "HOOKHOST_HOST_PID"  # the host's pid, as the host passes it

ECHO_TOOL = NAME + "__echo"
ECHO_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The text to echo back."},
    },
    "required": ["text"],
    "additionalProperties": False,
}


def log(level, message, **fields):
    """Write one hclog-style JSON line to stderr.

    The host parses these and re-logs them at their level under
    plugin.pyshout. A host that died closed the pipe; losing a log line then
    is better than dying on it. So is any other failure to write it: a
    signal handler that logs while the stream is mid-write gets a
    RuntimeError, and must still go on to do its job.
    """
    now = datetime.datetime.now(datetime.timezone.utc)
    entry = {
        "@level": level,
        "@message": message,
        "@module": NAME,
        # The one layout the host reads; any other makes the line plain text.
        "@timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z",
    }
    entry.update(fields)
    try:
        sys.stderr.write(json.dumps(entry) + "\n")
        sys.stderr.flush()
    except Exception:
        pass


def host_gone():
    """Whether the host that started this plugin is gone. A host that passed
    its pid is gone when no process has that pid any more, or when it was
    the first parent and the plugin has been re-parented (a killed host not
    yet reaped still has its pid). A parent other than the host is no sign
    of anything: a wrapper script that does not exec the plugin sits between
    them. Without the pid, the host is the first parent."""
    ppid = os.getppid()
    host = os.environ.get(HOST_PID_ENV, "")
    if not host.isdigit() or int(host) <= 0:
        return ppid != PARENT_PID
    host = int(host)
    if host == PARENT_PID and ppid != PARENT_PID:
        return True
    try:
        os.kill(host, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass  # it exists, under another user
    return False


def leave(reason):
    """Exit at once, taking the plugin's own children along when it leads
    its process group (the host starts it so).

    Runs in the SIGTERM handler, which may interrupt a write to stderr, so
    the line goes out with os.write (Python's buffered stream refuses a
    reentrant write) and nothing it does can stop the group kill. Killing
    the group kills this process too, so the line is written just before.
    """
    line = json.dumps({"@level": "warn", "@message": "pyshout exiting: " + reason,
                       "@module": NAME, "host_pid": os.environ.get(HOST_PID_ENV) or PARENT_PID})
    try:
        os.write(2, (line + "\n").encode())
    except Exception:
        pass
    if os.getpgrp() == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os._exit(0)


def watch_parent():
    """Exit when the host is gone, however it went: a SIGKILLed host never
    asks its plugins to shut down, and the plugin is then re-parented."""

    def loop():
        while not host_gone():
            time.sleep(PARENT_POLL_SECONDS)
        leave("the host process %s is gone" % (os.environ.get(HOST_PID_ENV) or PARENT_PID))

    threading.Thread(target=loop, daemon=True).start()


# SIGTERM is the host's parent-death signal; a host that is alive stops its
# plugins through go-plugin's controller instead.
signal.signal(signal.SIGTERM, lambda *_: leave("received SIGTERM (the host is gone or asked the plugin to stop)"))

if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
    sys.stderr.write(
        "This is a hookhost plugin, started by hookhost, not by hand.\n"
        "Enable it in hookhost.toml: plugins.enabled = [\"pyshout\"] and\n"
        "plugins.entries.pyshout.path = \"examples/python-plugin/plugin.py\".\n")
    sys.exit(1)

watch_parent()

try:
    import grpc
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    import plugin_pb2 as pb
except ImportError as exc:
    log("error", "pyshout cannot start: a Python module is missing; "
        "install Debian's python3-grpcio, python3-protobuf and python3-cryptography",
        error=str(exc), python=sys.executable)
    sys.exit(1)

SERVICE = pb.DESCRIPTOR.services_by_name["Plugin"]


# --- the plugin ------------------------------------------------------------

class PluginError(Exception):
    """A failure the plugin reports to the host as its own."""


class Pyshout:
    """The hooks. Configure runs once, before any hook; hooks run
    concurrently on the server's thread pool, so the settings are replaced
    as a whole rather than mutated."""

    def __init__(self):
        self.settings = {"signature": "-- pyshout", "shout": True}

    def describe(self, _request, _context):
        return pb.Manifest(
            name=NAME,
            version=VERSION,
            # The hooks served below, by their catalogue names: the host asks
            # nothing else.
            hooks=["pre_tool_call", "pre_tool_call_can_provide_result",
                   "transform_llm_output"],
            # The tool hooks are asked for this plugin's own tools only.
            matchers=[NAME + "__*"],
            tools=[pb.ToolSpec(
                name=ECHO_TOOL,
                description="Echo a text back, shouted (upper case) unless pyshout is configured otherwise.",
                input_schema=compact(ECHO_SCHEMA).encode())],
        )

    def configure(self, request, _context):
        raw = request.config_json or b"{}"
        try:
            config = json.loads(raw)
        except ValueError as exc:
            raise PluginError("config is not JSON: %s" % exc)
        if not isinstance(config, dict):
            raise PluginError("config must be a table")
        settings = dict(self.settings)
        for key, value in config.items():
            if key == "signature":
                if not isinstance(value, str):
                    raise PluginError("signature must be a string, got %s" % json.dumps(value))
            elif key == "shout":
                if not isinstance(value, bool):
                    raise PluginError("shout must be true or false, got %s" % json.dumps(value))
            else:
                raise PluginError("unknown key %r (known keys: shout, signature)" % key)
            settings[key] = value
        self.settings = settings
        log("debug", "configured", signature=settings["signature"], shout=settings["shout"])
        return pb.ConfigureResponse()

    def pre_tool_call(self, request, _context):
        text = echo_text(request.arguments)
        if not text:
            return pb.PreToolCallResponse(block=pb.Block(
                message="%s needs a non-empty \"text\" argument" % ECHO_TOOL))
        if self.settings["shout"] and text != text.upper():
            args = json.loads(request.arguments)
            args["text"] = text.upper()
            return pb.PreToolCallResponse(modified_args=compact(args).encode())
        return pb.PreToolCallResponse()  # no opinion

    def provide_result(self, request, _context):
        if request.name != ECHO_TOOL:
            return pb.ToolResultResponse()  # not ours: no opinion
        content = compact({"echo": echo_text(request.arguments)})
        return pb.ToolResultResponse(result=pb.ToolResult(content=content))

    def transform_output(self, request, _context):
        signature = self.settings["signature"]
        if not signature or request.text.endswith(signature):
            return pb.TextResponse()  # unset text: no opinion
        return pb.TextResponse(text=request.text + "\n\n" + signature)


def compact(value):
    """JSON without spaces, as Go writes it, so traces read the same."""
    return json.dumps(value, separators=(",", ":"))


def echo_text(arguments):
    """The text argument of an echo call, or "" when there is none."""
    try:
        args = json.loads(arguments or b"{}")
    except ValueError:
        return ""
    text = args.get("text") if isinstance(args, dict) else None
    return text if isinstance(text, str) else ""


# --- go-plugin's contract --------------------------------------------------

def unary(fn, request_type, response_type, method):
    """A unary handler that reports a failure as the plugin's own, with a
    message naming the method, and logs the traceback."""

    def handle(request, context):
        try:
            return fn(request, context)
        except PluginError as exc:
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))
        except Exception as exc:  # a bug here must not take the plugin down
            log("error", "handler failed", method=method, error=repr(exc), traceback=traceback.format_exc())
            context.abort(grpc.StatusCode.INTERNAL, "%s: %s: %r" % (NAME, method, exc))

    return grpc.unary_unary_rpc_method_handler(
        handle,
        request_deserializer=request_type.FromString,
        response_serializer=response_type.SerializeToString)


def plugin_service(plugin):
    """hookhost.plugin.v1.Plugin: the RPCs pyshout serves. Message types
    come from the descriptor protoc generated, so they cannot drift from
    plugin.proto; the host never calls an RPC whose hook is not in the
    manifest."""
    handlers = {}
    for method, fn in [
        ("Describe", plugin.describe),
        ("Configure", plugin.configure),
        ("PreToolCall", plugin.pre_tool_call),
        ("PreToolCallCanProvideResult", plugin.provide_result),
        ("TransformLlmOutput", plugin.transform_output),
    ]:
        desc = SERVICE.methods_by_name[method]
        handlers[method] = unary(fn, getattr(pb, desc.input_type.name),
                                 getattr(pb, desc.output_type.name), method)
    return grpc.method_handlers_generic_handler(SERVICE.full_name, handlers)


class Raw:
    """Hand-written (de)serializers for the few messages of grpc.health.v1
    and plugin.GRPCController, whose generated code Debian does not ship."""

    @staticmethod
    def empty(data):
        # Not None: grpc takes a None request for a failed deserialization.
        return data

    @staticmethod
    def serialize_empty(_message):
        return b""

    @staticmethod
    def health_service(data):
        """HealthCheckRequest{string service = 1} -> the service name."""
        i = 0
        while i < len(data):
            key, i = varint(data, i)
            field, wire = key >> 3, key & 7
            if wire == 2:
                size, i = varint(data, i)
                if field == 1:
                    return data[i:i + size].decode("utf-8", "replace")
                i += size
            elif wire == 0:
                _, i = varint(data, i)
            else:
                break  # no other wire types in this message
        return ""

    @staticmethod
    def health_status(status):
        """HealthCheckResponse{ServingStatus status = 1}."""
        return bytes([0x08, status])


def varint(data, i):
    value = shift = 0
    while i < len(data):
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return value, i


SERVING = 1


def health_service():
    def check(service, context):
        # go-plugin asks for "plugin"; "" is the server as a whole.
        if service not in ("", "plugin"):
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service %r" % service)
        return SERVING

    return grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
        "Check": grpc.unary_unary_rpc_method_handler(
            check, request_deserializer=Raw.health_service,
            response_serializer=Raw.health_status),
    })


def controller_service(shutdown):
    def handle(_request, _context):
        # Answer first, stop after: the host waits for this reply.
        threading.Thread(target=shutdown, args=("the host asked it to shut down",), daemon=True).start()
        return None

    return grpc.method_handlers_generic_handler("plugin.GRPCController", {
        "Shutdown": grpc.unary_unary_rpc_method_handler(
            handle, request_deserializer=Raw.empty,
            response_serializer=Raw.serialize_empty),
    })


def server_certificate():
    """A throwaway self-signed certificate for go-plugin's AutoMTLS.

    The host pins exactly this certificate as its root and connects with
    server name "localhost", so it must be valid for localhost, be a CA and
    allow server auth. Returns (key PEM, certificate PEM, certificate DER).
    """
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "hookhost plugin " + NAME),
    ])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        # The certificate dies with the process; it only needs to outlive it.
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=True, key_cert_sign=True,
            crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    return key_pem, cert.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.DER)


def serve():
    # A Ctrl-C in the host's terminal reaches the whole process group; the
    # host decides when its plugins stop, as go-plugin does for Go plugins.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    client_cert = os.environ.get("PLUGIN_CLIENT_CERT", "").encode()
    if not client_cert:
        log("error", "pyshout cannot start: PLUGIN_CLIENT_CERT is not set; "
            "the host must start plugins with go-plugin's AutoMTLS on")
        return 1
    key_pem, cert_pem, cert_der = server_certificate()

    sock_dir = tempfile.mkdtemp(prefix="pyshout-", dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None)
    sock = os.path.join(sock_dir, "plugin.sock")

    # The host may send up to 256 MiB (plugins.entries.<name>.max_request_size
    # at its ceiling); grpc's own 4 MiB default would refuse what the host
    # was allowed to send and the failure would count against this plugin.
    server = grpc.server(
        concurrent.futures.ThreadPoolExecutor(max_workers=8),
        options=[("grpc.max_receive_message_length", MAX_MESSAGE_SIZE)])
    server.add_generic_rpc_handlers([plugin_service(Pyshout())])
    server.add_generic_rpc_handlers([health_service()])

    stopping = threading.Event()

    def stop(reason):
        if stopping.is_set():
            return
        stopping.set()
        log("debug", "pyshout stopping", reason=reason)
        server.stop(grace=1).wait()

    server.add_generic_rpc_handlers([controller_service(stop)])
    # Only the host, holding the key of PLUGIN_CLIENT_CERT, may connect.
    credentials = grpc.ssl_server_credentials(
        [(key_pem, cert_pem)], root_certificates=client_cert, require_client_auth=True)
    try:
        server.add_secure_port("unix:" + sock, credentials)
    except RuntimeError as exc:
        log("error", "pyshout cannot start: cannot listen", socket=sock, error=str(exc))
        shutil.rmtree(sock_dir, ignore_errors=True)
        return 1
    server.start()


    # go-plugin sends the leaf certificate as unpadded standard base64 of its
    # DER bytes, because the handshake is one line.
    cert_b64 = base64.b64encode(cert_der).decode().rstrip("=")
    HANDSHAKE_OUT.write("%d|%d|unix|%s|grpc|%s\n" % (CORE_PROTOCOL, APP_PROTOCOL, sock, cert_b64))
    HANDSHAKE_OUT.flush()
    log("debug", "pyshout serving", socket=sock, pid=os.getpid())

    server.wait_for_termination()
    shutil.rmtree(sock_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(serve())
