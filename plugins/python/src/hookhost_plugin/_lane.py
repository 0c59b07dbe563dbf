"""The lane: protocol version 2's hook stream on the connected Unix socket
the host hands every plugin process it starts, as inherited descriptor
``HOOKHOST_LANE_FD`` (PROTOCOL.md, "The lane").

Each message is a frame: a 4-byte big-endian length, then a serialized
``HostMessage`` (host to plugin) or ``PluginMessage`` (plugin to host). The
lane carries the same messages as a ``Hooks`` stream, with the same
meaning, so one :class:`~hookhost_plugin.runtime.HookStream` serves it.

Why: a gRPC message in Python crosses several threads of the gRPC runtime
on each side; a lane call is one ``recv_into`` on the thread that then
answers it, and one ``sendall``.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import socket
import stat
import threading
from typing import List, MutableMapping, Optional, Tuple, Union

from ._proto import pluginv2_pb2 as pb2
from .runtime import Adapted, HookStream

__all__ = [
    "LANE_FD_ENV",
    "FrameTooLarge",
    "FrameReader",
    "FrameWriter",
    "Lane",
    "take_lane",
]

_log = logging.getLogger("hookhost_plugin")

#: The variable naming the descriptor of the plugin's lane.
LANE_FD_ENV = "HOOKHOST_LANE_FD"

# A frame's length prefix.
HEADER = 4
# What a read asks for at once: most frames, and often several, fit in it;
# a longer one is read into a buffer of its own size.
BUFFER = 64 << 10


def take_lane(
    environ: Optional[MutableMapping[str, str]] = None,
) -> Tuple[Optional[socket.socket], str]:
    """Take the lane the host handed this process: ``(socket, "")``;
    ``(None, "")`` when it handed none; ``(None, why)`` when the variable
    does not name a connected Unix stream socket.

    The variable is removed from ``environ`` (``os.environ`` by default,
    which unsets it for the processes the plugin starts) and the descriptor
    made close-on-exec, so that no child of the plugin holds the lane open
    or takes it for its own. A descriptor that is not a stream socket is
    left as it is: it is not the host's lane, and may be something else's.
    """
    env = os.environ if environ is None else environ
    raw = env.pop(LANE_FD_ENV, None)
    if raw is None:
        return None, ""
    text = raw.strip()
    if not text.isdigit() or int(text) < 3:
        return None, "%s=%r is not a descriptor the host could have handed over" % (
            LANE_FD_ENV,
            raw,
        )
    fd = int(text)
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        return None, "%s=%d is not an open descriptor: %s" % (LANE_FD_ENV, fd, exc.strerror)
    if not stat.S_ISSOCK(mode):
        return None, "%s=%d is not a socket" % (LANE_FD_ENV, fd)
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        return None, "%s=%d: %s" % (LANE_FD_ENV, fd, exc)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        sock.detach()  # not the lane: the descriptor stays as it was
        return None, "%s=%d is not a Unix stream socket" % (LANE_FD_ENV, fd)
    try:
        sock.set_inheritable(False)
    except OSError as exc:
        sock.detach()
        return None, "%s=%d cannot be made close-on-exec: %s" % (LANE_FD_ENV, fd, exc)
    return sock, ""


class FrameTooLarge(Exception):
    """A frame whose length is over the reader's limit: the lane cannot go
    on, since what follows is that frame's body."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__("received message larger than max (%d vs. %d)" % (size, limit))
        self.size = size
        self.limit = limit


class FrameReader:
    """Reads a lane's frames. A read may bring part of a frame or several;
    each call of :meth:`next` returns one frame's body, whole."""

    def __init__(self, sock: socket.socket, limit: int, size: int = BUFFER) -> None:
        self._sock = sock
        self._limit = limit
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        self._r = 0  # start of what is unread
        self._w = 0  # end of what was read

    def next(self) -> Union[bytes, bytearray]:
        """The next frame's body. Raises EOFError at the end of the lane,
        even within a frame, FrameTooLarge for a length over the limit
        (before anything is allocated for it), OSError as the socket does."""
        while self._w - self._r < HEADER:
            self._fill()
        size = int.from_bytes(self._view[self._r : self._r + HEADER], "big")
        if size > self._limit:
            raise FrameTooLarge(size, self._limit)
        start = self._r + HEADER
        if HEADER + size <= len(self._buf):
            while self._w - self._r < HEADER + size:
                self._fill()
                start = self._r + HEADER
            self._r = start + size
            # A copy: the buffer is read into again before a decoder that
            # kept a view of it would be done with it.
            return bytes(self._view[start : start + size])
        big = bytearray(size)
        got = self._w - start
        big[:got] = self._view[start : self._w]
        self._r = self._w = 0
        rest = memoryview(big)
        while got < size:
            n = self._sock.recv_into(rest[got:])
            if n == 0:
                raise EOFError("the lane ended within a frame")
            got += n
        return big

    def _fill(self) -> None:
        """Read more, moving what is unread to the buffer's start first
        when the room after it is short."""
        if self._r == self._w:
            self._r = self._w = 0
        elif len(self._buf) - self._w < HEADER + 1 or self._r > len(self._buf) // 2:
            n = self._w - self._r
            self._buf[:n] = self._view[self._r : self._w]
            self._r, self._w = 0, n
        n = self._sock.recv_into(self._view[self._w :])
        if n == 0:
            raise EOFError("the host closed the lane")
        self._w += n


class FrameWriter:
    """Writes a lane's frames, each whole in one ``sendall`` under a lock,
    so that no two frames interleave. Once closed it drops what it is given."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()
        self._closed = False

    def write(self, body: bytes) -> None:
        """Send one frame; raises OSError when the lane is broken."""
        frame = len(body).to_bytes(HEADER, "big") + body
        with self._lock:
            if self._closed:
                return
            self._sock.sendall(frame)

    def close(self) -> None:
        """Close the socket once no frame is being written, so that the
        descriptor is never closed under a write in progress (shut the
        socket down first to wake a write blocked on a full socket)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._sock.close()


class _Idle:
    """A lane thread waiting for the turn: woken with turn set, it reads;
    woken without, it leaves."""

    def __init__(self) -> None:
        self.wake = threading.Event()
        self.turn = False


class _TakeTurn(concurrent.futures.Executor):
    """The executor of a lane's calls: the thread that read a call hands
    the reading to another thread and answers the call itself (see Lane)."""

    def __init__(self, lane: "Lane") -> None:
        self._lane = lane

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def,override]
        self._lane._pass_turn()
        f: "concurrent.futures.Future[object]" = concurrent.futures.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: B036 - the future holds it, as a pool's would
            f.set_exception(exc)
        return f


class Lane:
    """The plugin's end of the lane, served as a ``Hooks`` stream whose
    answers go out as frames. It ends at the end of the lane, at a frame
    that is not the protocol (too long, or undecodable), or by
    :meth:`close`: the calls it carried are cancelled and the socket closed.

    One thread at a time reads the lane (holds the turn). When it reads a
    call it passes the turn to an idle thread of the lane's, or a new one,
    and answers the call itself: a call's way from the socket to its
    handler crosses no thread, and the next reader wakes while the call
    runs, not before it. A thread whose call is answered waits, idle, for
    the turn again. So the lane is read at all times, and its threads are
    at most its calls in flight (HookStream bounds them) and one reader.
    """

    def __init__(
        self,
        sock: socket.socket,
        plugin: Adapted,
        stages: concurrent.futures.Executor,
        limit: int,
    ) -> None:
        self._sock = sock
        self._frames = FrameReader(sock, limit)
        self._out = FrameWriter(sock)
        self._lock = threading.Lock()
        self._ended = False
        # Idle threads, each waiting to be given the turn or to leave.
        self._idle: List[_Idle] = []
        self._turn = threading.local()
        self._closed = threading.Event()  # the socket is closed
        self.stream = HookStream(plugin, self._send, _TakeTurn(self), stages, carrier="lane")

    def start(self) -> "Lane":
        """Start reading the lane."""
        self._spawn()
        return self

    def _spawn(self) -> None:
        threading.Thread(target=self._work, name="hookhost-lane", daemon=True).start()

    def _pass_turn(self) -> None:
        """Give the turn to an idle thread, or to a new one. Once the lane
        has ended the turn is kept: its holder reads the end and closes the
        socket."""
        with self._lock:
            if self._ended:
                return
            idle = self._idle.pop() if self._idle else None
            if idle is not None:
                idle.turn = True
        if idle is not None:
            idle.wake.set()
        else:
            try:
                self._spawn()
            except RuntimeError as exc:
                # The call is answered all the same; reading waits for it.
                _log.warning(
                    "cannot start a thread to read the lane; it is read again once this call is answered",
                    extra={"hookhost": {"error": str(exc)}},
                )
                return
        self._turn.passed = True

    def _work(self) -> None:
        """A lane thread: read while it holds the turn, then wait for it.
        A thread given the turn reads even if the lane has ended meanwhile:
        it reads the end, and closes the socket."""
        me = _Idle()
        while self._read():
            with self._lock:
                if self._ended:
                    return
                me.turn = False
                me.wake.clear()
                self._idle.append(me)
            me.wake.wait()
            if not me.turn:
                return  # the lane ended

    def _send(self, m: pb2.PluginMessage) -> None:
        try:
            self._out.write(m.SerializeToString())
        except OSError as exc:
            # A write that fails breaks the lane: the host, seeing it end,
            # sends the next calls on the Hooks stream.
            _log.debug(
                "cannot write to the host's lane; it ends",
                extra={"hookhost": {"error": str(exc)}},
            )
            self.close()

    def _read(self) -> bool:
        """Read the lane while holding the turn: True once a call took this
        thread (the turn passed on), False once the lane ended."""
        why = ""
        try:
            while True:
                body = self._frames.next()
                try:
                    m = pb2.HostMessage.FromString(body)
                except Exception as exc:
                    why = "the host sent a message on the lane that does not decode: %s" % exc
                    break
                self._turn.passed = False
                self.stream.receive(m)
                if self._turn.passed:
                    return True
        except FrameTooLarge as exc:
            why = "the host sent a frame on the lane over the plugin's limit: %s" % exc
        except (EOFError, OSError) as exc:
            if not self.ended:
                _log.debug("the lane ended", extra={"hookhost": {"reason": str(exc)}})
        if why:
            _log.warning(
                "the plugin ends its lane; the host sends its calls on the Hooks stream",
                extra={"hookhost": {"reason": why}},
            )
        self.close()
        # Closed here only, by the thread holding the turn, which no other
        # takes once the lane ended: no read can then use the descriptor
        # after it was closed (and maybe reused).
        with self._lock:
            self._out.close()
        self._closed.set()
        return False

    def close(self) -> None:
        """End the lane: cancel the calls it carried and stop reading it
        (its reader then closes the socket). Idempotent."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            idle, self._idle = self._idle, []
            try:
                # Wakes the reader, and a write blocked on a full socket.
                # Under the lock, as the reader's closing of the socket is,
                # so that it never reaches a descriptor closed meanwhile.
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # the host's end is gone already
        for waiting in idle:
            waiting.wake.set()  # to leave, without the turn
        self.stream.close()

    @property
    def ended(self) -> bool:
        """Whether the lane has ended."""
        with self._lock:
            return self._ended

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait until the lane has ended and its socket is closed; whether
        it has."""
        return self._closed.wait(timeout)
