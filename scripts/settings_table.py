"""Print README.md's settings table (markdown) from the settings classes' own field descriptions.

    python scripts/settings_table.py

Paste its output into README.md between `<!-- settings-table:start -->` and
`<!-- settings-table:end -->`; tests/test_readme.py fails when the two differ.

Each row is one environment variable: the class's env_prefix plus the field's name upper-cased
(or its alias), its default and the field's `description`. A field without a description stops
the script: every setting documents itself. Variables that are not yet fields of a settings class
are listed in EXTRA_VARIABLES below; a variable that a class already defines is listed once, from
the class, so an entry there can be deleted once its variable has moved into a class.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# The settings classes whose fields make the table, in order, as "module:Class". A subclass listed
# after its base adds only the fields the base lacks (a variable is listed once).
SETTINGS_CLASSES = [
    "pictorank.settings:CommonSettings",
    "pictorank.api.settings:Settings",
]

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))  # this checkout's package, not another installed one


def _extra_variables() -> list[tuple[str, str, str]]:
    """(variable, default, description) of variables read outside any settings class: none now."""
    return []


EXTRA_VARIABLES: Callable[[], list[tuple[str, str, str]]] = _extra_variables


def _load(spec: str) -> type:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


@contextmanager
def _without_variables(prefixes: tuple[str, ...]) -> Iterator[None]:
    """Hide the variables a default may read, so the table shows the default, not this shell's value."""
    saved = {key: value for key, value in os.environ.items() if key.startswith(prefixes)}
    for key in saved:
        del os.environ[key]
    try:
        yield
    finally:
        os.environ.update(saved)


def _roots() -> list[Path]:
    """Folders whose paths are shown relative: this checkout and the one the package came from."""
    roots = [REPO]
    try:
        import pictorank

        roots.append(Path(pictorank.__file__).resolve().parents[2])
    except (ImportError, IndexError, TypeError):
        pass
    return roots


def _path(value: Path) -> str:
    path = Path(value).expanduser()
    for root in _roots():
        if path.is_absolute() and path.resolve().is_relative_to(root):
            return path.resolve().relative_to(root).as_posix()
    home = Path.home()
    if path.is_absolute() and path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return path.as_posix()


def _value(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, Path):
        return f"`{_path(value)}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (list, tuple, dict)):
        return f"`{json.dumps(value, default=str)}`"
    if hasattr(value, "get_secret_value"):
        return "(secret)"
    if isinstance(value, int):
        # 1,000,000: readable, and no run of digits that looks like a commit hash; a port (8000) or a
        # count under 10,000 is written as it is typed
        return f"`{value:,}`" if abs(value) >= 10_000 else f"`{value}`"
    return f"`{value}`"


def _default(field: Any, prefix: str) -> str:
    factory = field.default_factory
    if factory is None:
        return _value(field.default)
    try:
        with _without_variables((prefix,)):
            return _value(factory())
    except Exception:  # a factory that needs more than the environment: say what it is instead
        doc = (getattr(factory, "__doc__", None) or "").strip().splitlines()
        return doc[0] if doc else "see description"


def _variable(name: str, field: Any, prefix: str) -> str:
    alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
    return (alias or prefix + name).upper()


def _cell(text: str) -> str:
    """Markdown-safe table cell: `|` escaped; `<`, `>` and `&` escaped outside code spans, where a
    renderer would take `<data_dir>` for an HTML tag."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def settings_rows() -> list[tuple[str, str, str]]:
    """(variable, default, description) of every setting, each variable once."""
    rows: dict[str, tuple[str, str, str]] = {}
    for spec in SETTINGS_CLASSES:
        cls = _load(spec)
        prefix = cls.model_config.get("env_prefix", "")
        for name, field in cls.model_fields.items():
            variable = _variable(name, field, prefix)
            if variable in rows:
                continue
            if not field.description:
                raise ValueError(f"{spec}.{name} has no description: give its Field a description=")
            rows[variable] = (variable, _default(field, prefix), field.description)
    for variable, default, description in EXTRA_VARIABLES():
        rows.setdefault(variable, (variable, default, description))
    return list(rows.values())


def settings_table() -> str:
    """The markdown table (variable, default, description), without a trailing newline."""
    lines = ["| variable | default | description |", "|---|---|---|"]
    for variable, default, description in settings_rows():
        lines.append(f"| `{variable}` | {_cell(default)} | {_cell(description)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(settings_table())
