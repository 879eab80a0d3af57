"""Throughput of one GET over the Python client (issue 18, Must show 3).

    python net_get.py ADDR KEY [REPEATS]

GETs KEY from the Hurray server at ADDR (host:port) REPEATS times (default 3) on one
connection and prints the fastest as one line ``net_get python BYTES SECONDS`` (data
bytes of the tensor; wall seconds of the ``Client.get`` call, receive and reassembly
included). `cargo xtask bench` divides BYTES by SECONDS and compares with the Rust
client in the same run.
"""

from __future__ import annotations

import sys
import time

import hurray


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    addr, key = argv[0], argv[1]
    repeats = int(argv[2]) if len(argv) == 3 else 3
    best, size = float("inf"), 0
    with hurray.connect(addr) as c:
        for _ in range(repeats):
            t0 = time.perf_counter()
            t = c.get(key)
            dt = time.perf_counter() - t0
            size = t.nbytes
            del t  # release before the next GET
            best = min(best, dt)
    print(f"net_get python {size} {best:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
