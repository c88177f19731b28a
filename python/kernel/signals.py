"""Users' signal handlers run inside cells only (spec-eval.md P16 keeps a late SIGINT out of the
next cell; this is the same rule for every other signal).

A handler a cell installs with ``signal.signal`` (a ``SIGALRM`` timer, say) can fire at any
point of the main thread, also while the kernel writes the cell's last frames or waits for the
next command. An exception raised there would escape the kernel's main loop: the interpreter
would exit, put the signal back to its default action, and the next tick would kill the process
with the namespace in it. So ``signal.signal`` installs a gate in front of the user's handler:
while a cell runs the handler is called as usual; otherwise the signal is noted and its handler
runs once at the start of the next cell, where whatever it raises is that cell's error. SIGINT
outside a cell is dropped, as before. A signal that arrives while its own handler runs is held
and delivered once after it (the kernel does the same for a C handler) instead of nesting.
Signals whose handler is ``SIG_DFL``/``SIG_IGN`` or was set by C code are untouched.

The gate goes into the ``signal`` module when user code first imports it: the kernel itself uses
``_signal``, which spares every start the ``enum`` import that ``signal`` brings.
"""

import _signal


class Gate:
    """The user's handlers, by signal number, and the signals that arrived outside a cell."""

    def __init__(self, running):
        self.running = running  # () -> bool: whether user code runs now
        self.handlers = {}
        self.arrived = []
        self.active = set()
        self.real_signal, self.real_getsignal = _signal.signal, _signal.getsignal

    def install(self, module):
        """Puts the gate into the ``signal`` module, in front of its own functions."""
        self.real_signal, self.real_getsignal = module.signal, module.getsignal
        module.signal, module.getsignal = self.signal, self.getsignal

    def signal(self, signalnum, handler):
        previous = self.getsignal(signalnum)
        if callable(handler):
            self.real_signal(signalnum, self._gated)
            self.handlers[int(signalnum)] = handler
        else:
            self.real_signal(signalnum, handler)
            self.handlers.pop(int(signalnum), None)
        return previous

    def getsignal(self, signalnum):
        return self.handlers.get(int(signalnum), self.real_getsignal(signalnum))

    def _gated(self, signum, frame):
        handler = self.handlers.get(signum)
        if handler is None:
            return None
        if not self.running():
            if signum != _signal.SIGINT:
                self._note(signum)
            return None
        if signum in self.active:
            # As for a C handler, a signal is held while its own handler runs: a handler slower
            # than its timer's interval would otherwise nest until RecursionError.
            self._note(signum)
            return None
        self.active.add(signum)
        try:
            handler(signum, frame)
            while signum in self.arrived and self.running():
                self.arrived.remove(signum)
                handler(signum, frame)
        finally:
            self.active.discard(signum)
        return None

    def _note(self, signum):
        if signum not in self.arrived:
            self.arrived.append(signum)

    def deliver(self):
        """Runs the handlers of the signals that arrived outside a cell (inside the cell)."""
        while self.arrived:
            signum = self.arrived.pop(0)
            handler = self.handlers.get(signum)
            if handler is not None:
                self._gated(signum, None)
