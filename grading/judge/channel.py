"""The judge's end of its agent's Unix socket: a line of JSON each way, read without blocking and without an event
loop, every line and every request bounded by what the judge itself sent (grading/judge/execute.py drives it)."""
import json
import os
import select
import socket
import stat


# What the judge reads for one request is bounded by what it sent: a line of the agent's may hold what the judge
# sent twice over (a call's arguments changed, and its result) plus LINE_ALLOWANCE, and all of a request's lines
# (its callbacks' too) eight times what the judge sent while it ran plus CALL_ALLOWANCE. Measured on every
# notebook's reference solution: the largest request 19.8 MB (10's models), the largest line 0.27 MB (02's
# answers), a request's lines together at most a few MB (07, 08: hundreds of small callbacks).
LINE_ALLOWANCE = 8 << 20
CALL_ALLOWANCE = 64 << 20
CHUNK = 1 << 20
FILL_CHUNKS = 16         # chunks read per poll: the deadline is checked between
STRAY_LINES = 2         # lines of a stopped request the agent may still write after an interrupt
UNREQUESTED = 1_000      # lines for no request of the judge's it passes over in one cell before it refuses more


class Channel:
    """The judge's end of the agent's socket: lines of JSON each way, read without blocking."""

    def __init__(self, path):
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)  # the file itself, never a link's target
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                raise RuntimeError("the judge's agent did not leave a socket where it listens")
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        self.sock.setblocking(False)
        self.fd, self.buf, self.dead, self.unpolled = self.sock.fileno(), bytearray(), False, False
        self.readable = select.poll()
        self.readable.register(self.fd, select.POLLIN)
        self.line_limit, self.call_left, self.tail, self.unrequested, self.refused = LINE_ALLOWANCE, 0, 0, 0, None

    def send(self, msg, timeout, new=False):
        """Send one line; `new`: a new request, whose lines' budgets start from the allowances."""
        if self.dead:
            raise ValueError("the agent hung up")
        data = json.dumps(msg, allow_nan=True, separators=(",", ":")).encode("ascii") + b"\n"
        if new:
            self.line_limit, self.call_left = LINE_ALLOWANCE, CALL_ALLOWANCE
        self.line_limit = max(self.line_limit, LINE_ALLOWANCE + 2 * len(data))
        self.call_left += 8 * len(data)
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
        finally:
            self.sock.setblocking(False)

    def refuse(self, why):
        """Read nothing more from the agent: the cell fails with `why`, and the kernel is restarted."""
        self.refused, self.dead = why, True
        self.buf.clear()

    def wait(self, seconds):
        """Whether the agent's socket has something to read (or was hung up) within `seconds`."""
        return bool(self.readable.poll(seconds * 1000))

    def fill(self):
        try:
            for _ in range(FILL_CHUNKS):
                data = self.sock.recv(CHUNK)
                if not data:
                    self.dead = True
                    return
                self.call_left -= len(data)
                nl = data.rfind(b"\n")
                self.tail = self.tail + len(data) if nl < 0 else len(data) - nl - 1
                if self.call_left < 0:
                    return self.refuse("the kernel sent more than the grader reads for one call (its agent's "
                                       "socket was written to by something else?)")
                if self.tail > self.line_limit:
                    return self.refuse(f"the kernel sent a line of more than {self.line_limit:,} bytes, more than "
                                       "any answer to what the grader sent")
                self.buf += data
                if len(data) < CHUNK:  # the socket held less than a chunk: nothing more waits (the next poll says)
                    return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.dead = True

    def line(self, n):
        """The next whole line of request n, as a dict (anything else is passed over), or None. A line for no
        request of the judge's (not beginning with its number: the agent writes "n" first) is counted, never
        parsed."""
        prefix = b'{"n":%d,' % n
        while True:
            at = self.buf.find(b"\n")
            if at < 0:
                return None
            if at > self.line_limit:
                self.refuse(f"the kernel sent a line of more than {self.line_limit:,} bytes")
                return None
            raw = bytes(self.buf[:at])
            del self.buf[:at + 1]
            if not raw.startswith(prefix):
                self.unrequested += 1
                if self.unrequested > UNREQUESTED:
                    self.refuse(f"the kernel sent more than {UNREQUESTED:,} lines for no request of the grader's")
                    return None
                continue
            try:
                msg = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if type(msg) is dict:
                return msg

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
