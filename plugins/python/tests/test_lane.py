"""The lane (PROTOCOL.md, "The lane"), in-process over a socket pair whose
one end plays the host: frames cut anywhere or gathered, writers that
never interleave, calls answered, a frame that is not the protocol or the
lane's end cancelling the calls it carried and closing it while the Hooks
stream goes on, and taking the descriptor from the environment."""

import concurrent.futures
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import unittest

import grpc

import hookhost_plugin as hp
from hookhost_plugin._lane import (
    BUFFER,
    LANE_FD_ENV,
    FrameReader,
    FrameTooLarge,
    FrameWriter,
    Lane,
    take_lane,
)
from hookhost_plugin._proto import plugin_pb2 as pb
from hookhost_plugin._proto import pluginv2_pb2 as pb2
from hookhost_plugin.runtime import Adapted
from hookhost_plugin.server import MAX_MESSAGE_SIZE, v2_service

# How long a test waits for what must happen; it never waits this long
# when the code is right.
LIVENESS = 20.0


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def pair():
    """A connected socket pair, (host's end, plugin's end); reads on the
    host's end give up after LIVENESS rather than hang a broken test."""
    host, plugin = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    host.settimeout(LIVENESS)
    return host, plugin


def read_to_eof(sock: socket.socket) -> bytes:
    """What sock receives until its peer closes it (socket.timeout when
    the peer never does)."""
    out = b""
    while True:
        try:
            b = sock.recv(65536)
        except ConnectionResetError:
            # Linux says so when the peer closed with bytes left unread.
            return out
        if not b:
            return out
        out += b


class FrameReaderTest(unittest.TestCase):
    def bodies(self):
        rnd = random.Random(7)
        sizes = [0, 1, 3, 4, 5, 100, BUFFER - 4, BUFFER - 3, BUFFER, 3 * BUFFER + 17, 0, 2]
        sizes += [rnd.randrange(0, 5000) for _ in range(200)]
        return [bytes(rnd.randrange(256) for _ in range(n)) for n in sizes]

    def check(self, chunks_of, size=BUFFER):
        """Send every body as frames, the stream cut by chunks_of, and
        read them back with a reader whose buffer is size bytes."""
        bodies = self.bodies()
        data = b"".join(frame(b) for b in bodies)
        host, plugin = pair()
        self.addCleanup(host.close)
        self.addCleanup(plugin.close)
        plugin.settimeout(LIVENESS)

        def send():
            for chunk in chunks_of(data):
                host.sendall(chunk)
            host.shutdown(socket.SHUT_WR)

        t = threading.Thread(target=send, daemon=True)
        t.start()
        r = FrameReader(plugin, limit=1 << 20, size=size)
        got = [bytes(r.next()) for _ in bodies]
        with self.assertRaises(EOFError):
            r.next()
        t.join(LIVENESS)
        self.assertEqual(len(got), len(bodies))
        for i, (g, want) in enumerate(zip(got, bodies)):
            self.assertEqual(g, want, "frame %d (%d bytes)" % (i, len(want)))

    def test_gathered_in_one_write(self):
        self.check(lambda data: [data])

    def test_cut_anywhere(self):
        rnd = random.Random(11)

        def cuts(data):
            i = 0
            while i < len(data):
                n = rnd.choice((1, 2, 3, 5, 7, 64, 1000, 70000))
                yield data[i : i + n]
                i += n

        self.check(cuts)

    def test_small_buffer_moves_what_is_unread(self):
        # A buffer of 16 bytes: nearly every frame is longer, and the
        # others straddle its end.
        rnd = random.Random(13)

        def cuts(data):
            i = 0
            while i < len(data):
                n = rnd.randrange(1, 40)
                yield data[i : i + n]
                i += n

        self.check(cuts, size=16)

    def test_too_large_is_refused_from_its_length(self):
        host, plugin = pair()
        self.addCleanup(host.close)
        self.addCleanup(plugin.close)
        # Only the length: a reader that waited for the body would time
        # out instead of refusing it.
        plugin.settimeout(LIVENESS)
        host.sendall((1001).to_bytes(4, "big"))
        r = FrameReader(plugin, limit=1000)
        with self.assertRaises(FrameTooLarge) as cm:
            r.next()
        self.assertEqual((cm.exception.size, cm.exception.limit), (1001, 1000))
        self.assertIn("larger than max (1001 vs. 1000)", str(cm.exception))

    def test_limit_itself_is_accepted(self):
        host, plugin = pair()
        self.addCleanup(host.close)
        self.addCleanup(plugin.close)
        plugin.settimeout(LIVENESS)
        host.sendall(frame(b"x" * 1000))
        self.assertEqual(bytes(FrameReader(plugin, limit=1000).next()), b"x" * 1000)

    def test_end_within_a_frame(self):
        for sent in (b"\x00\x00", frame(b"0123456789")[:9], frame(b"y" * 100000)[:70000]):
            host, plugin = pair()
            plugin.settimeout(LIVENESS)
            host.sendall(sent)
            host.close()
            with self.assertRaises(EOFError, msg="after %d bytes" % len(sent)):
                FrameReader(plugin, limit=1 << 20).next()
            plugin.close()


class FrameWriterTest(unittest.TestCase):
    def test_concurrent_writers_never_interleave(self):
        host, plugin = pair()
        self.addCleanup(host.close)
        self.addCleanup(plugin.close)
        w = FrameWriter(plugin)
        writers, each = 8, 150
        # Bodies long enough that a socket write may be cut short.
        bodies = {(i, j): (b"%d:%d:" % (i, j)) * (100 + 97 * j) for i in range(writers) for j in range(each)}

        def write(i):
            for j in range(each):
                w.write(bodies[(i, j)])

        threads = [threading.Thread(target=write, args=(i,), daemon=True) for i in range(writers)]
        for t in threads:
            t.start()
        r = FrameReader(host, limit=1 << 24)
        got = [bytes(r.next()) for _ in range(writers * each)]
        for t in threads:
            t.join(LIVENESS)
        self.assertEqual(sorted(got), sorted(bodies.values()))
        # Each writer's frames arrive in its order.
        for i in range(writers):
            mine = [g for g in got if g.startswith(b"%d:" % i)]
            self.assertEqual(mine, [bodies[(i, j)] for j in range(each)])

    def test_closed_writer_drops_frames(self):
        host, plugin = pair()
        self.addCleanup(host.close)
        w = FrameWriter(plugin)
        w.close()
        w.write(b"late")  # dropped, no error
        self.assertEqual(plugin.fileno(), -1)
        self.assertEqual(read_to_eof(host), b"")


class Slow(hp.Plugin):
    """Answers pre_tool_call with the carrier; "wait" waits until its call
    is over, saying so."""

    name = "slow"

    def __init__(self):
        self.waiting = threading.Event()
        self.over = threading.Event()
        self.reason = None

    def pre_tool_call(self, call, ctx):
        if call.name == "wait":
            self.waiting.set()
            ctx.wait(LIVENESS)
            self.reason = ctx.reason
            self.over.set()
            return None
        return hp.block("%s on the %s" % (call.name, ctx.carrier))


def call(cid: int, name: str) -> bytes:
    payload = pb.ToolCallRequest(name=name).SerializeToString()
    m = pb2.HostMessage(
        call=pb2.HookCall(
            id=cid,
            stages=[pb2.Stage(hook="pre_tool_call", timeout_ns=int(LIVENESS * 2e9))],
            payload=payload,
        )
    )
    return frame(m.SerializeToString())


class LaneTest(unittest.TestCase):
    def setUp(self):
        self.pool = concurrent.futures.ThreadPoolExecutor(8)
        self.addCleanup(self.pool.shutdown, wait=False)
        self.host, plugin_end = pair()
        self.addCleanup(self.host.close)
        self.plugin = Slow()
        self.lane = Lane(plugin_end, Adapted(self.plugin), self.pool, limit=1 << 20).start()
        self.addCleanup(self.lane.close)
        self.frames = FrameReader(self.host, limit=1 << 20)

    def answer(self):
        return pb2.PluginMessage.FromString(self.frames.next())

    def assert_ended(self):
        """The lane ended: its reader is gone, its socket closed, and the
        host's end reads the end of the lane, no answer before it."""
        self.assertEqual(read_to_eof(self.host), b"", "the plugin answered on an ended lane")
        self.assertTrue(self.lane.join(LIVENESS), "the lane's socket was not closed")
        self.assertTrue(self.lane.ended)
        self.assertEqual(self.lane._sock.fileno(), -1, "the plugin's end of the lane is not closed")

    def test_calls_answered_on_the_lane(self):
        # Two calls in one write, and one cut in two.
        self.host.sendall(call(1, "a") + call(2, "b"))
        second = call(3, "c")
        self.host.sendall(second[:5])
        got = {}
        for _ in range(2):
            m = self.answer()
            got[m.id] = m
        self.host.sendall(second[5:])
        m = self.answer()
        got[m.id] = m
        for cid, name in ((1, "a"), (2, "b"), (3, "c")):
            self.assertTrue(got[cid].last)
            block = pb.PreToolCallResponse.FromString(got[cid].answer).block
            self.assertEqual(block.message, "%s on the lane" % name)
        self.assertFalse(self.lane.ended)

    def test_end_of_the_lane_cancels_its_calls(self):
        self.host.sendall(call(1, "wait"))
        self.assertTrue(self.plugin.waiting.wait(LIVENESS))
        self.host.shutdown(socket.SHUT_WR)
        self.assertTrue(self.plugin.over.wait(LIVENESS), "the call outlived its lane")
        self.assertEqual(self.plugin.reason, "cancelled")
        self.assert_ended()

    def check_garbage_ends_the_lane(self, garbage: bytes):
        self.host.sendall(call(1, "wait"))
        self.assertTrue(self.plugin.waiting.wait(LIVENESS))
        with self.assertLogs("hookhost_plugin", "WARNING") as logs:
            self.host.sendall(garbage + call(2, "after"))
            self.assertTrue(self.plugin.over.wait(LIVENESS), "the call outlived its lane")
            self.assert_ended()
        self.assertEqual(self.plugin.reason, "cancelled")
        self.assertIn("the plugin ends its lane", logs.output[0])
        return logs.records[0].hookhost["reason"]

    def test_undecodable_frame_ends_the_lane(self):
        why = self.check_garbage_ends_the_lane(frame(b"\xff\xff\xff\xff"))
        self.assertIn("does not decode", why)

    def test_oversize_frame_ends_the_lane(self):
        why = self.check_garbage_ends_the_lane((1 << 20 | 1).to_bytes(4, "big"))
        self.assertIn("over the plugin's limit", why)
        self.assertIn("(1048577 vs. 1048576)", why)

    def test_close_ends_the_lane(self):
        self.host.sendall(call(1, "wait"))
        self.assertTrue(self.plugin.waiting.wait(LIVENESS))
        self.lane.close()
        self.assertTrue(self.plugin.over.wait(LIVENESS))
        self.assert_ended()

    def test_host_gone_while_answering(self):
        # The host reads nothing and goes: the writes fail, the lane ends,
        # the plugin is not hurt.
        self.host.sendall(b"".join(call(i, "x" * 50000) for i in range(1, 40)))
        self.host.close()
        self.assertTrue(self.lane.join(LIVENESS), "the lane's socket was not closed")
        self.assertTrue(self.lane.ended)


class Waiters(hp.Plugin):
    """pre_tool_call "wait" waits until its call is over and counts it."""

    name = "waiters"

    def __init__(self):
        self.cond = threading.Condition()
        self.waiting = 0
        self.cancelled = 0

    def pre_tool_call(self, call, ctx):
        if call.name != "wait":
            return hp.block(call.name)
        with self.cond:
            self.waiting += 1
            self.cond.notify_all()
        ctx.wait(LIVENESS)
        with self.cond:
            if ctx.reason == "cancelled":
                self.cancelled += 1
            self.cond.notify_all()
        return None


def lane_threads():
    return {t for t in threading.enumerate() if t.name == "hookhost-lane"}


class LaneConcurrencyTest(unittest.TestCase):
    def setUp(self):
        self.pool = concurrent.futures.ThreadPoolExecutor(8)
        self.addCleanup(self.pool.shutdown, wait=False)
        self.host, plugin_end = pair()
        self.addCleanup(self.host.close)
        self.plugin = Waiters()
        self.before = lane_threads()
        self.lane = Lane(plugin_end, Adapted(self.plugin), self.pool, limit=1 << 20).start()
        self.addCleanup(self.lane.close)
        self.frames = FrameReader(self.host, limit=1 << 20)

    def test_read_while_calls_run(self):
        # Each call holds the thread that read it: the lane is still read,
        # a quick call answered, and Cancel reaches the calls that wait.
        n = 12
        self.host.sendall(b"".join(call(i, "wait") for i in range(1, n + 1)))
        with self.plugin.cond:
            self.assertTrue(self.plugin.cond.wait_for(lambda: self.plugin.waiting == n, LIVENESS))
        self.host.sendall(call(100, "quick"))
        m = pb2.PluginMessage.FromString(self.frames.next())
        self.assertEqual(m.id, 100)
        self.assertEqual(pb.PreToolCallResponse.FromString(m.answer).block.message, "quick")
        cancels = [pb2.HostMessage(cancel=pb2.Cancel(id=i)).SerializeToString() for i in range(1, n + 1)]
        self.host.sendall(b"".join(frame(c) for c in cancels))
        with self.plugin.cond:
            self.assertTrue(self.plugin.cond.wait_for(lambda: self.plugin.cancelled == n, LIVENESS))
        self.assertFalse(self.lane.ended)

    def test_threads_are_reused(self):
        for i in range(1, 201):
            self.host.sendall(call(i, "x"))
            self.assertEqual(pb2.PluginMessage.FromString(self.frames.next()).id, i)
        # One call at a time needs the thread reading and the one
        # answering, and a few on their way to wait for the turn: not a
        # thread per call.
        self.assertLess(len(lane_threads() - self.before), 20)
        self.lane.close()
        self.assertTrue(self.lane.join(LIVENESS))
        deadline = time.monotonic() + LIVENESS
        while lane_threads() - self.before and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(lane_threads() - self.before, set(), "the lane's threads outlived it")


class LaneBesideHooksTest(unittest.TestCase):
    """The lane as serve() sets it up beside version 2's gRPC service."""

    def setUp(self):
        import shutil
        import tempfile

        self.pool = concurrent.futures.ThreadPoolExecutor(8)
        self.addCleanup(self.pool.shutdown, wait=False)
        self.host, plugin_end = pair()
        self.addCleanup(self.host.close)
        p = Adapted(Slow())
        self.lane = Lane(plugin_end, p, self.pool, MAX_MESSAGE_SIZE).start()
        service, self.close_streams = v2_service(grpc, p, self.pool, self.pool, self.lane)
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(8))
        self.server.add_generic_rpc_handlers([service])
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        self.server.add_insecure_port("unix:" + os.path.join(d, "s.sock"))
        self.server.start()
        self.addCleanup(lambda: self.server.stop(0).wait())
        self.channel = grpc.insecure_channel("unix:" + os.path.join(d, "s.sock"))
        self.addCleanup(self.channel.close)

    def describe(self):
        return self.channel.unary_unary(
            "/hookhost.plugin.v2.Plugin/Describe",
            request_serializer=pb.DescribeRequest.SerializeToString,
            response_deserializer=pb.Manifest.FromString,
        )(pb.DescribeRequest(), timeout=LIVENESS)

    def hooks_call(self, name):
        hooks = self.channel.stream_stream(
            "/hookhost.plugin.v2.Plugin/Hooks",
            request_serializer=pb2.HostMessage.SerializeToString,
            response_deserializer=pb2.PluginMessage.FromString,
        )
        done = threading.Event()

        def send():
            yield pb2.HostMessage.FromString(call(9, name)[4:])
            done.wait(LIVENESS)

        responses = hooks(send(), timeout=LIVENESS)
        try:
            return next(responses)
        finally:
            done.set()

    def test_broken_lane_leaves_the_hooks_stream(self):
        self.assertTrue(self.describe().lane, "the manifest does not say lane while it is served")
        # A frame over the SDK's limit: the lane ends.
        with self.assertLogs("hookhost_plugin", "WARNING"):
            self.host.sendall((MAX_MESSAGE_SIZE + 1).to_bytes(4, "big"))
            self.assertEqual(read_to_eof(self.host), b"")
            self.assertTrue(self.lane.join(LIVENESS), "the lane's socket was not closed")
        self.assertFalse(self.describe().lane, "the manifest says lane after it ended")
        m = self.hooks_call("next")
        self.assertEqual((m.id, m.last), (9, True))
        block = pb.PreToolCallResponse.FromString(m.answer).block
        self.assertEqual(block.message, "next on the grpc")

    def test_shutdown_closes_the_lane(self):
        self.close_streams()
        self.assertEqual(read_to_eof(self.host), b"")
        self.assertTrue(self.lane.join(LIVENESS), "the lane's socket was not closed")
        self.assertTrue(self.lane.ended)


class TakeLaneTest(unittest.TestCase):
    def inheritable_end(self, kind=socket.SOCK_STREAM):
        """The plugin's end of a socket pair as the host hands it: an
        inheritable descriptor above 2. Returns (fd, host's end)."""
        a, b = socket.socketpair(socket.AF_UNIX, kind)
        self.addCleanup(a.close)
        fd = b.detach()
        os.set_inheritable(fd, True)
        return fd, a

    def test_takes_the_socket_close_on_exec(self):
        fd, host = self.inheritable_end()
        env = {LANE_FD_ENV: str(fd), "OTHER": "x"}
        sock, why = take_lane(env)
        self.assertEqual(why, "")
        self.addCleanup(sock.close)
        self.assertEqual(env, {"OTHER": "x"})
        self.assertEqual(sock.fileno(), fd)
        self.assertFalse(os.get_inheritable(fd))
        sock.sendall(b"ping")
        host.settimeout(LIVENESS)
        self.assertEqual(host.recv(4), b"ping")

    def test_none_handed(self):
        env = {"OTHER": "x"}
        self.assertEqual(take_lane(env), (None, ""))
        self.assertEqual(env, {"OTHER": "x"})

    def test_malformed_values(self):
        for value in ("abc", "", "2", "0", "-4", "3x", "1e3"):
            env = {LANE_FD_ENV: value}
            sock, why = take_lane(env)
            self.assertIsNone(sock, value)
            self.assertIn("is not a descriptor the host could have handed over", why, value)
            self.assertNotIn(LANE_FD_ENV, env)

    def test_not_a_socket_is_left_alone(self):
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, w)
        env = {LANE_FD_ENV: str(r)}
        sock, why = take_lane(env)
        self.assertIsNone(sock)
        self.assertEqual(why, "%s=%d is not a socket" % (LANE_FD_ENV, r))
        os.fstat(r)  # still open
        self.assertNotIn(LANE_FD_ENV, env)

    def test_datagram_socket_is_left_alone(self):
        fd, _ = self.inheritable_end(socket.SOCK_DGRAM)
        self.addCleanup(os.close, fd)
        sock, why = take_lane({LANE_FD_ENV: str(fd)})
        self.assertIsNone(sock)
        self.assertIn("is not a Unix stream socket", why)
        os.fstat(fd)  # still open
        self.assertTrue(os.get_inheritable(fd), "a descriptor that is not the lane was changed")

    def test_closed_descriptor(self):
        r, w = os.pipe()
        os.close(w)
        os.close(r)
        sock, why = take_lane({LANE_FD_ENV: str(r)})
        self.assertIsNone(sock)
        self.assertIn("is not an open descriptor", why)

    @unittest.skipUnless(
        sys.platform.startswith("linux"), "lists a child's descriptors in /proc (Linux only)"
    )
    def test_a_child_inherits_neither_descriptor_nor_variable(self):
        fd, _ = self.inheritable_end()
        saved = os.environ.get(LANE_FD_ENV)
        os.environ[LANE_FD_ENV] = str(fd)
        try:
            sock, why = take_lane()
        finally:
            if saved is not None:
                os.environ[LANE_FD_ENV] = saved
        self.assertEqual(why, "")
        self.addCleanup(sock.close)
        self.assertNotIn(LANE_FD_ENV, os.environ)
        # close_fds=False: only close-on-exec keeps the lane from the child.
        script = (
            "import json, os\n"
            "fds = {}\n"
            "for d in os.listdir('/proc/self/fd'):\n"
            "    try:\n"
            "        fds[d] = os.readlink('/proc/self/fd/' + d)\n"
            "    except OSError:\n"
            "        pass  # the listing's own descriptor, closed already\n"
            "print(json.dumps(fds))\n"
            "print(os.environ.get(%r, 'unset'))\n" % LANE_FD_ENV
        )
        out = subprocess.run(
            [sys.executable, "-c", script], close_fds=False, capture_output=True, text=True, check=True
        ).stdout
        fds_line, env_line = out.strip().splitlines()
        fds = json.loads(fds_line)
        self.assertIn("0", fds, "the child listed no descriptors: %s" % fds)
        self.assertNotIn(str(fd), fds, "the child inherited the lane's descriptor: %s" % fds)
        self.assertEqual(env_line, "unset")


if __name__ == "__main__":
    unittest.main()
