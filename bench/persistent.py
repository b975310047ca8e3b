"""bench/persistent: the persistent-map choice behind the head's indexes.

Measures single sets, bulk builds through the transient form, and gets on a map
of 5,000 string keys (the SciFact corpus size) for pyrsistent.pmap and
immutables.Map, in the same run. pyrsistent comes from the ``bench`` extra
(``pip install -e '.[bench]'``): this script is the only code that imports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pyrsistent
from immutables import Map

N = 5_000
KEYS = [f"resources/beir/{i % 100:02d}/{i}-some-title.html" for i in range(N)]


def per_op(fn: Callable[[], object], ops: int, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best / ops * 1e6


def main() -> None:
    p = pyrsistent.pmap(dict.fromkeys(KEYS, 1))
    m = Map(dict.fromkeys(KEYS, 1))

    def p_sets() -> None:
        x = p
        for k in KEYS:
            x = x.set(k, 2)

    def m_sets() -> None:
        x = m
        for k in KEYS:
            x = x.set(k, 2)

    def p_evolver() -> None:
        start: pyrsistent.PMap[str, int] = pyrsistent.pmap()
        e = start.evolver()
        for k in KEYS:
            e[k] = 1
        e.persistent()

    def m_mutate() -> None:
        empty: Map[str, int] = Map()
        with empty.mutate() as mm:
            for k in KEYS:
                mm[k] = 1
            mm.finish()

    def p_gets() -> None:
        for k in KEYS:
            p[k]

    def m_gets() -> None:
        for k in KEYS:
            m[k]

    rows = [
        ("set on a 5,000-key map", per_op(p_sets, N), per_op(m_sets, N)),
        ("bulk build via transient", per_op(p_evolver, N), per_op(m_mutate, N)),
        ("get", per_op(p_gets, N), per_op(m_gets, N)),
    ]
    print(f"{'operation':28s} {'pyrsistent':>12s} {'immutables':>12s} {'ratio':>7s}")
    for name, pv, mv in rows:
        print(f"{name:28s} {pv:10.2f}us {mv:10.2f}us {pv / mv:6.1f}x")


if __name__ == "__main__":
    main()
