# pty_session.py -- what the REPL tests share (imported by the test_repl*.sh scripts' Python):
# `cujit` on a pseudo-terminal, expect() with a pattern and a generous limit, ok/fail counting,
# ctrl_d_exits_0() to end a session and check its status.
import os, pty, re, select, sys, time

fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg, file=sys.stderr)


def ok(msg):
    print("ok: " + msg)


def verdict():
    print("%d failure(s)" % fails)
    sys.exit(1 if fails else 0)


class Session:
    """cujit on a pseudo-terminal; expect() waits (up to a generous limit) for a pattern."""

    def __init__(self, cujit, env, args=()):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.update(env)
            os.execv(cujit, [cujit] + list(args))
        self.buf, self.seen = "", 0
        self.sent_at = 0  # len(buf) at the last send: what the REPL shows after it is its answer

    def read(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if not r:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return False
            if not data:
                return False
            # a lone \r (libedit redrawing the line) starts a line too, for ^ in patterns
            self.buf += data.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        return True

    def expect(self, what, pattern, limit=30):
        rx = re.compile(pattern, re.M)
        end = time.time() + limit
        while True:
            m = rx.search(self.buf, self.seen)
            if m:
                self.seen = m.end()
                ok(what)
                return m
            if time.time() > end or not self.read(0.1):
                m = rx.search(self.buf, self.seen)
                if m:
                    self.seen = m.end()
                    ok(what)
                    return m
                fail("%s: no /%s/ in: %r" % (what, pattern, self.buf[self.seen:]))
                return None

    def show_sanitizer_report(self):
        """A sanitizer's report (the sanitizer build) goes to the terminal, so into buf, not the
        test's output: copied to stderr, where ctest's log and scripts/sanitize.sh can see it (its
        rerun of a crash of the sanitizer's own, "Tracer caught signal", depends on that)."""
        marks = ("==ERROR: ", "Tracer caught signal", "Sanitizer has encountered", "runtime error:")
        found = [at for at in (self.buf.find(mark) for mark in marks) if at >= 0]
        if found:
            at = min(found)
            print("the session's terminal, from the sanitizer's report on:\n" + self.buf[at:],
                  file=sys.stderr)

    def send(self, text):
        self.sent_at = len(self.buf)
        os.write(self.fd, text.encode())

    def finish(self, limit=30, kill=True):
        """The session's exit status once it ends within `limit` seconds; else None, after killing
        it unless kill is False (the caller then may still send it something)."""
        end = time.time() + limit
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.read(0.2)
                self.show_sanitizer_report()
                return os.waitstatus_to_exitcode(status)
            self.read(0.1)
        if kill:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        return None


def ctrl_d_exits_0(s, what):
    """Ctrl-D at the prompt of Session s: the REPL must end with status 0. Sent once a prompt is
    the last thing shown: between two lines the terminal is in cooked mode, where the line
    discipline takes a ^D typed ahead as an end of file that libedit's next read never sees (seen
    under load: the session then waited for input until the test gave up). The prompt must be
    one shown after the last line sent: the one before it is still the buffer's end until the
    line's echo arrives (CI, under load: ^D went out while the line ran, and was lost)."""
    end = time.time() + 30
    while not re.search(r"(^|\n)>>? $", s.buf[s.sent_at:]) and time.time() < end:
        s.read(0.1)
    s.send("\x04")
    rc = s.finish(5, kill=False)
    if rc is None:  # taken by the line discipline while a restarted REPL set its terminal up
        s.send("\x04")  # (CI, under load, after :restart): a user would press it again
        rc = s.finish(25)
    if rc == 0: ok(what + ": Ctrl-D exits 0")
    else: fail("%s: exit status %r" % (what, rc))
