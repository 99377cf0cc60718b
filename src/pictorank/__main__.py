"""The `pictorank` command's entry point (also `python -m pictorank`).

It installs the signal handlers first and only then imports :mod:`pictorank.cli`, which takes
a while (pandas, numpy, pydantic). Until the CLI takes over, a Ctrl-C or a SIGTERM
ends the process at once with the CLI's own line and exit status: nothing has been written yet,
so there is nothing to clean up. The CLI then handles them itself (its cleanups run).

The one window left is Python's own start-up before this module's `main` runs: the interpreter,
`site`, and importing this package and module, which import nothing heavy (the package reads its
version lazily; `_signal` is used for `signal`, which imports enum). In that window, much shorter
than the CLI's imports, Python's defaults apply: a KeyboardInterrupt traceback, or a silent
death by SIGTERM (exit -15).
"""

from __future__ import annotations

import _signal  # the C module under `signal`, which imports enum: a window of its own
import importlib
import os
import sys

INTERRUPTED = 130  # as the CLI's own exit statuses (128 + the signal's number)
TERMINATED = 143
_LINES = {_signal.SIGINT: ("pictorank: interrupted\n", INTERRUPTED),
          _signal.SIGTERM: ("pictorank: terminated\n", TERMINATED)}


def _exit_now(signum: int, frame: object) -> None:
    """End before the CLI has started any work: one line, the CLI's status, no traceback. An
    exception here could surface in any import's frame, or outside `main`'s try, as a traceback."""
    line, status = _LINES[signum]
    os.write(2, line.encode())
    os._exit(status)


def main() -> int:
    previous = {signum: _signal.signal(signum, _exit_now) for signum in _LINES}
    try:
        cli = importlib.import_module("pictorank.cli")
        # From here a Ctrl-C is a KeyboardInterrupt the CLI catches (its cleanups run); the CLI
        # installs its own SIGTERM handler before it starts work, and puts this one back after.
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        return cli.main()
    except KeyboardInterrupt:  # before the CLI's handler is in place, or after it is gone
        print("pictorank: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        for signum, handler in previous.items():
            _signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
