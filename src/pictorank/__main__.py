"""The `pictorank` command's entry point (also `python -m pictorank`).

It only imports :mod:`pictorank.cli` and runs it. Importing the CLI takes about half a second
(pandas, numpy, pydantic); a Ctrl-C in that time would otherwise end in a KeyboardInterrupt
traceback, since the CLI's own handler is not installed yet.
"""

from __future__ import annotations

import importlib
import sys

INTERRUPTED = 130  # as the CLI's own exit status for Ctrl-C (128 + SIGINT)


def main() -> int:
    try:
        cli = importlib.import_module("pictorank.cli")
        return cli.main()
    except KeyboardInterrupt:  # before the CLI's handler is in place, or after it is gone
        print("pictorank: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
