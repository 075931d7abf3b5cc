# pty_session.py -- what the REPL tests share (imported by the test_repl*.sh scripts' Python):
# `cujit` on a pseudo-terminal, expect() with a pattern and a generous limit, ok/fail counting,
# ctrl_d_exits_0() to end a session and check its status.
import os, pty, re, select, sys, termios, time

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

    def raw_mode(self):
        """Whether the terminal is out of canonical mode (the master's termios are the slave's):
        libedit waiting for a key, not the line discipline collecting a line."""
        try:
            return not termios.tcgetattr(self.fd)[3] & termios.ICANON
        except termios.error:
            return False

    def wait_for_input(self, prompt, limit=120):
        """True once `prompt` (a pattern) ends what the session showed after the last send and
        libedit has put the terminal in raw mode to read the next key; False after `limit` seconds.
        A control key must wait for both: libedit writes the prompt first and switches to raw mode
        only when it reads (strace: write "> ", then TCSETSW), and a ^D that arrives in between is
        an end of file to the line discipline, which the switch turns into a NUL byte; after a
        NUL libedit rings the bell at every later ^D and Enter runs nothing (CI, under load, after
        :restart: two ^D 5 s apart, the session waited until killed; strace delaying the prompt's
        write by 0.5 s does the same every time)."""
        rx = re.compile(prompt)
        end = time.time() + limit
        while time.time() < end:
            if rx.search(self.buf[self.sent_at:]) and self.raw_mode():
                return True
            if not self.read(0.05):
                return False
        return False

    def describe(self):
        """What a failure report needs to tell a hang from a slow machine: what the terminal
        showed after the last send, its mode, and where the process is (state, kernel wait,
        system call: a read of the terminal shows as read or pselect6 with fd 0 / nfds 1)."""
        def proc(name):
            try:
                with open("/proc/%d/%s" % (self.pid, name)) as f:
                    return f.read().strip()
            except OSError as e:
                return "(%s)" % e.strerror
        stat = proc("stat")
        state = stat[stat.rfind(")") + 2:].split(" ")[0] if ")" in stat else stat
        return ("after the last send the terminal showed %r; terminal in %s mode; process %d: "
                "state %s, wchan %s, syscall %s" % (
                    self.buf[self.sent_at:], "raw" if self.raw_mode() else "canonical",
                    self.pid, state, proc("wchan"), " ".join(proc("syscall").split()[:3])))

    def finish(self, limit=120, kill=True):
        """The session's exit status once it ends within `limit` seconds; else None, after
        saying where it is (describe) and killing it unless kill is False (the caller then may
        still send it something). The limit is generous since it costs nothing when the session
        ends: a sanitizer build's exit (LeakSanitizer's scan, the engine's teardown) on a loaded
        machine must not read as a hang."""
        end = time.time() + limit
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.read(0.2)
                self.show_sanitizer_report()
                return os.waitstatus_to_exitcode(status)
            self.read(0.1)
        print("the session did not end within %g s: %s" % (limit, self.describe()),
              file=sys.stderr)
        if kill:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        return None


def ctrl_d_exits_0(s, what):
    """Ctrl-D at the prompt of Session s: the REPL must end with status 0. Sent once a prompt
    shown after the last line sent is the last thing shown and the terminal is in raw mode
    (wait_for_input: a ^D in the cooked mode between two lines is lost). The prompt must be one
    shown after the last line sent: the one before it is still the buffer's end until the
    line's echo arrives (CI, under load: ^D went out while the line ran, and was lost). Sent
    once, not again after a while: in raw mode it cannot be lost, so a session still waiting
    for a key is the REPL ignoring ^D, which a second one would hide."""
    if not s.wait_for_input(r"(^|\n)>>? $"):
        fail("%s: no prompt waiting for a key: %s" % (what, s.describe()))
        os.kill(s.pid, 9)
        os.waitpid(s.pid, 0)
        return
    s.send("\x04")
    rc = s.finish()
    if rc == 0: ok(what + ": Ctrl-D exits 0")
    else: fail("%s: exit status %r" % (what, rc))
