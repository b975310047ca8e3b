"""Lazy package exports: a package's public names, imported on first use.

A CLI command pays for every module a package ``__init__`` imports, and the store,
head and format packages each re-export a dozen modules most commands never touch.
Resolving a name only when it is first read keeps a cold ``memhtml status`` to the
modules it actually runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` resolving ``names`` (public name -> submodule) lazily."""

    def resolve(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        globals_of_package = importlib.import_module(package).__dict__
        globals_of_package[name] = value
        return value

    return resolve
