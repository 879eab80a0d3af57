"""Arrow Flight half of bench_get.rs: do_get of the same bytes on loopback.

Usage: python flight_bench.py RAW_FILE RUNS
A Flight server (its own process) serves RAW_FILE, memory-mapped, as one uint8
column in record batches of 8 MiB; the client times do_get(...).read_all() and
prints `flight_seconds BEST` and `flight_server_vmhwm_kib N`.
"""
import os
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.flight as flight

CHUNK = 8 << 20


class Server(flight.FlightServerBase):
    def __init__(self, path):
        super().__init__("grpc://127.0.0.1:0")
        buf = pa.memory_map(path, "r").read_buffer()
        arr = pa.Array.from_buffers(pa.uint8(), len(buf), [None, buf])
        chunks = [arr.slice(o, CHUNK) for o in range(0, len(arr), CHUNK)]
        self.table = pa.Table.from_batches(
            [pa.record_batch([c], names=["bytes"]) for c in chunks]
        )

    def do_get(self, context, ticket):
        return flight.RecordBatchStream(self.table)


def vmhwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    if sys.argv[1] == "--serve":
        s = Server(sys.argv[2])
        print(s.port, flush=True)
        s.serve()
        return
    path, runs = sys.argv[1], int(sys.argv[2])
    size = os.path.getsize(path)
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", path], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(child.stdout.readline())
        client = flight.connect(f"grpc://127.0.0.1:{port}")
        best = float("inf")
        for _ in range(runs):
            t = time.perf_counter()
            table = client.do_get(flight.Ticket(b"big")).read_all()
            e = time.perf_counter() - t
            got = sum(c.buffers()[1].size for c in table.column(0).chunks)
            assert table.num_rows == size and got >= size, (table.num_rows, got, size)
            del table
            best = min(best, e)
        print(f"flight_seconds {best}")
        print(f"flight_server_vmhwm_kib {vmhwm(child.pid)}")
    finally:
        child.kill()
        child.wait()


if __name__ == "__main__":
    main()
