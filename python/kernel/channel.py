"""The kernel's own descriptors, kept where user code does not reach them (spec-eval.md E28).

The protocol pipes (fds 3 and 4 at start), the diagnostic pipe and the capture pipes move to
high numbers with close-on-exec. When the hard RLIMIT_NOFILE allows it they go *above* the soft
limit (raised for a moment, then lowered again: descriptors above the limit stay valid), where
neither ``os.closerange(3, 1024)`` nor ``os.closerange(3, os.sysconf("SC_OPEN_MAX"))`` reaches;
otherwise just under the soft limit (at most 65536). Each protocol descriptor also has a backup
copy: when user code closes one number, the kernel puts the channel back from the other before
the next frame. A cell that closes both copies (every descriptor up to the limit, when the soft
and hard limits are equal) loses the channel: the kernel exits and the host reports a crash.
"""

import fcntl
import os

# Room for the kernel's descriptors above (or below) the soft limit.
SPARE = 64
LOW_MAX = 65536


def ident(fd):
    """(device, inode) of what ``fd`` refers to, or None when it is closed."""
    try:
        st = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


class HighFds:
    """Places descriptors at high numbers."""

    def __init__(self):
        import resource

        self.resource = resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.soft, self.hard = soft, hard
        unlimited = hard == resource.RLIM_INFINITY
        self.raised = soft + SPARE if unlimited else min(hard, soft + SPARE)
        self.above = self.raised > soft
        self.below = max(100, min(soft - SPARE, LOW_MAX))

    def place(self, fd):
        """A close-on-exec duplicate of ``fd`` at a high number; ``fd`` itself is closed."""
        new = None
        if self.above:
            limit = self.resource.RLIMIT_NOFILE
            try:
                self.resource.setrlimit(limit, (self.raised, self.hard))
                try:
                    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, self.soft)
                finally:
                    self.resource.setrlimit(limit, (self.soft, self.hard))
            except (OSError, ValueError):
                new = None  # e.g. macOS caps numbers at OPEN_MAX: fall back below the limit
        if new is None:
            try:
                new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, self.below)
            except OSError:
                new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
        os.close(fd)
        return new


class Guarded:
    """One kernel descriptor plus a backup copy, repairable after user code closed one."""

    def __init__(self, high, fd):
        self.high = high
        self.fd = high.place(fd)
        self.id = ident(self.fd)
        self.backup = high.place(os.dup(self.fd))

    def numbers(self):
        return (self.fd, self.backup)

    def repair(self):
        """True when ``self.fd`` is the channel again (it may never have been lost)."""
        if ident(self.fd) == self.id:
            if ident(self.backup) != self.id:
                self.backup = self.high.place(os.dup(self.fd))
            return True
        if ident(self.backup) != self.id:
            return False
        if ident(self.fd) is None:
            os.dup2(self.backup, self.fd, inheritable=False)
        else:
            # The number now holds something the user opened: leave it, move elsewhere.
            self.fd = self.high.place(os.dup(self.backup))
        return ident(self.fd) == self.id
