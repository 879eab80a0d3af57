"""The Python producer and consumer of the cross-language matrix.

    python matrix.py produce CASES OUT_DIR   write CASE.hrry / CASE.hrrys for every case
    python matrix.py consume CASES DIR...    check every producer directory (result lines)
    python matrix.py views FILE              the demo: open, view and checksum every tensor
    python matrix.py hostile DIR             every hostile file and stream must be refused
                                             (hostile.py; also the SciPy path)
    python matrix.py metadata FILE           open (hurray.load) and count names (amplification)
    python matrix.py names                   every type and layout tag's rendered name
    python matrix.py net-get ADDR CASES OUT_DIR  GET every case's items ("CASE:NAME") from
                                             the server at ADDR, write OUT_DIR/CASE.hrry
    python matrix.py net-put ADDR CASES DIR  PUT every item of DIR/CASE.hrry as "CASE:NAME"
    python matrix.py net-views ADDR FILE     the demo's network step: GET every tensor of
                                             FILE's index from ADDR, the ``views`` table

Only the public ``hurray`` API is used. What that API cannot express is reported, not
hidden: a case the producer cannot write gets a ``CASE.EXT.na`` file saying why, a
case the consumer cannot read gets an ``na`` result, and what the consumer cannot
check (fields the API does not expose) is listed in ``note`` lines.
Case syntax: tests/cases/README.md.
"""

from __future__ import annotations

import math
import os
import struct
import sys
import time
import zlib

import numpy as np

import hurray
from hostile import hostile

# ---------------------------------------------------------------- cases

M64 = (1 << 64) - 1


def splitmix_bytes(seed: int, n: int) -> bytes:
    out = bytearray()
    s = seed & M64
    while len(out) < n:
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        out += (z ^ (z >> 31)).to_bytes(8, "little")
    return bytes(out[:n])


def unescape(tok: str) -> bytes:
    if tok == "~":
        return b""
    out, i, raw = bytearray(), 0, tok.encode()
    while i < len(raw):
        if raw[i] == ord("%"):
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def hexbytes(tok: str) -> bytes:
    return b"" if tok == "~" else bytes.fromhex(tok)


def f64(tok: str) -> float:
    if tok.startswith("bits:"):
        return struct.unpack("<d", int(tok[5:], 16).to_bytes(8, "little"))[0]
    return float(tok)


def ints(tok: str) -> list[int]:
    return [int(v) for v in tok.split(",")]


def shape_of(tok: str) -> list[int]:
    return [] if tok == "scalar" else ints(tok)


PACK = {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i",
        "u64": "Q", "i64": "q", "f32": "f", "f64": "d"}


def fill(size: int, t: list[str]) -> bytes:
    kind, vals = t[0], t[1:]
    if kind == "zero":
        out = bytes(size)
    elif kind == "rand":
        b = bytearray(splitmix_bytes(int(vals[0]), size))
        if len(vals) > 1:
            bits = int(vals[1].removeprefix("bits="))
            for i in range(len(b)):
                for k in range(8):
                    if i * 8 + k >= bits:
                        b[i] &= ~(1 << k) & 0xFF
        out = bytes(b)
    elif kind == "randrange":
        seed, lo, hi = (int(v) for v in vals)
        out = bytes(lo + g % (hi - lo + 1) for g in splitmix_bytes(seed, size))
    elif kind == "hex":
        out = bytes.fromhex("".join(vals))
    else:
        conv = f64 if kind in ("f32", "f64") else int
        out = b"".join(struct.pack("<" + PACK[kind], conv(v)) for v in vals)
    if len(out) != size:
        raise ValueError(f"fill gives {len(out)} bytes, the buffer has {size}")
    return out


def stats_of(toks: list[str]) -> dict:
    kv = dict(t.split("=", 1) for t in toks)
    s = {"mask": 0}
    if "nnz" in kv:
        s["mask"] |= 1
        s["nnz"] = int(kv["nnz"])
    if "sparsity" in kv:
        s["mask"] |= 2
        s["sparsity"] = f64(kv["sparsity"])
    if "min" in kv:
        s["mask"] |= 4
        s.update(min=f64(kv["min"]), max=f64(kv["max"]), absmax=f64(kv["absmax"]))
    if "mean" in kv:
        s["mask"] |= 8
        s.update(mean=f64(kv["mean"]), stddev=f64(kv["stddev"]))
    if "nm" in kv:
        s["mask"] |= 16
        n, m = kv["nm"].split(":")
        s.update(nm_n=int(n), nm_m=int(m))
    if "nan" in kv:
        s["mask"] |= 32
        s.update(has_nan=int(kv["nan"]), has_inf=int(kv["inf"]))
    return s


def kv_of(t: list[str]):
    ty, v = t[0], t[1:]
    one = {"string": lambda x: unescape(x).decode(), "int64": int, "uint64": int,
           "float64": f64, "bool": lambda x: x == "true", "bytes": hexbytes}
    if ty.startswith("array:"):
        return (ty, [one[ty[6:]](x) for x in v])
    return (ty, one[ty](v[0]))


def parse(text: str) -> list[dict]:
    cases: list[dict] = []
    cur = None  # the tensor or head directives apply to
    stack: list[list] = []  # open composites: [head, members left]
    for raw in text.splitlines():
        toks = raw.split()
        if not toks or toks[0].startswith("#"):
            continue
        d, rest = toks[0], toks[1:]
        if d == "case":
            cases.append({"name": rest[0], "items": [], "kv": []})
            cur, stack = None, []
        elif d == "note":
            pass
        elif d == "kv":
            cases[-1]["kv"].append((unescape(rest[0]).decode(), kv_of(rest[1:])))
        elif d in ("tensor", "composite"):
            item = {"kind": d, "name": unescape(rest[0]).decode(), "dtype": rest[1],
                    "shape": shape_of(rest[2]), "shard": None, "stats": None}
            if d == "tensor":
                item.update(layout=rest[3:], tiles=[], offset=0, buffers=[], quant=None,
                            role=None)
            else:
                item.update(rule=rest[3], op=rest[4], count=int(rest[5]), members=[])
            if stack:
                stack[-1][0]["members"].append(item)
                stack[-1][1] -= 1
            else:
                cases[-1]["items"].append(item)
            while stack and stack[-1][1] == 0:
                stack.pop()
            if d == "composite" and item["count"] > 0:
                stack.append([item, item["count"]])
            cur = item
        elif d == "tile":
            cur["tiles"].append(rest)
        elif d == "offset":
            cur["offset"] = int(rest[0])
        elif d == "buffer":
            size = int(rest[0])
            b = {"size": size, "align": 64 if size else 1, "memory": "standard"}
            k = 1
            while "=" in rest[k] and rest[k].split("=")[0] in ("align", "memory"):
                key, val = rest[k].split("=")
                b[key] = int(val) if key == "align" else val
                k += 1
            b["bytes"] = fill(size, rest[k:])
            b["default_align"] = b["align"] == (64 if size else 1)
            cur["buffers"].append(b)
        elif d == "quant":
            cur["quant"] = rest
        elif d == "shard":
            cur["shard"] = (ints(rest[0]), ints(rest[1]))
        elif d == "stats":
            cur["stats"] = stats_of(rest)
        elif d == "role":
            cur["role"] = rest[0]
        else:
            raise ValueError(f"unknown directive {d!r}")
    return cases


def names(item: dict, out: list[str]) -> None:
    out.append(item["name"])
    for m in item.get("members", []):
        names(m, out)


# ---------------------------------------------------------------- producer


def order_name(tok: str) -> tuple[str, list[int] | None]:
    if tok.startswith("strided:"):
        return "strided", ints(tok[8:])
    return tok, None


def tiled_layout(levels: list[list[str]]) -> hurray.TiledLayout:
    shape, outer, inner = levels[0]
    o, os_ = order_name(outer)
    i, is_ = order_name(inner)
    nested = tiled_layout(levels[1:]) if i == "tiled" else None
    return hurray.TiledLayout(ints(shape), outer_layout=o, inner_layout=i,
                              outer_strides=os_, inner_strides=is_, inner_tiled=nested)


def layout_of(t: dict):
    kind, a = t["layout"][0], t["layout"][1:]
    if kind == "row_major":
        return hurray.RowMajorLayout()
    if kind == "col_major":
        return hurray.ColMajorLayout()
    if kind == "strided":
        return hurray.StridedLayout(ints(a[0]))
    if kind == "tiled":
        return tiled_layout(t["tiles"])
    if kind == "morton":
        return hurray.MortonLayout(ints(a[0]))
    if kind == "hilbert":
        return hurray.HilbertLayout(int(a[0]), int(a[1]))
    if kind == "coo":
        return hurray.CooLayout(int(a[0]), is_sorted=a[1] == "sorted")
    if kind == "csr":
        return hurray.CsrLayout(int(a[0]))
    if kind == "csc":
        return hurray.CscLayout(int(a[0]))
    if kind == "csf":
        return hurray.CsfLayout(int(a[0]), ints(a[1]))
    if kind == "block_paged":
        return hurray.BlockPagedLayout(
            int(a[0]), int(a[1]), 0, int(a[2]), kv_role=a[3],
            layer_index=None if a[4] == "none" else int(a[4]),
            block_table_index_type="uint64" if a[5] == "u64" else "uint32")
    raise ValueError(f"unknown layout {kind}")


SCALE_TYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


def quant_of(q: list[str] | None):
    if q is None:
        return None
    s = q[0]
    if s == "per_tensor":
        return hurray.PerTensorAffine(float(q[1]), int(q[2]))
    if s == "per_channel":
        if q[3] == "none":
            return hurray.PerChannelAffine.symmetric(int(q[1]), int(q[2]))
        return hurray.PerChannelAffine.asymmetric(int(q[1]), int(q[2]), int(q[3]))
    if s == "per_block":
        st = hurray.Dtype.from_name(SCALE_TYPES[q[5]])
        if q[4] == "none":
            return hurray.PerBlockAffine.symmetric(int(q[1]), int(q[2]), int(q[3]), st)
        return hurray.PerBlockAffine.asymmetric(int(q[1]), int(q[2]), int(q[3]), int(q[4]), st)
    if s == "nf4":
        return hurray.NF4(int(q[1]), int(q[2]), int(q[3]))
    if s == "mxfp":
        return hurray.MXFP(int(q[1]), int(q[2]), int(q[3]))
    raise ValueError(f"unknown scheme {s}")


def stats_obj(s: dict | None):
    if s is None:
        return None
    kw = {}
    if s["mask"] & 1:
        kw["nnz"] = s["nnz"]
    if s["mask"] & 2:
        kw["sparsity_ratio"] = s["sparsity"]
    if s["mask"] & 4:
        kw.update(value_min=s["min"], value_max=s["max"], value_abs_max=s["absmax"])
    if s["mask"] & 8:
        kw.update(value_mean=s["mean"], value_stddev=s["stddev"])
    if s["mask"] & 16:
        kw.update(nm_n=s["nm_n"], nm_m=s["nm_m"])
    if s["mask"] & 32:
        kw.update(has_nan=bool(s["has_nan"]), has_inf=bool(s["has_inf"]))
    return hurray.Statistics(**kw)


def tensors_of(item: dict):
    """The tensors of an item: itself, or a composite's members' (pre-order)."""
    if item["kind"] == "composite":
        for m in item["members"]:
            yield from tensors_of(m)
    else:
        yield item


def cannot_write(case: dict) -> tuple[str | None, str | None]:
    """Why this package cannot write the case: (file reason, stream reason)."""
    for item in (t for it in case["items"] for t in tensors_of(it)):
        if item["offset"]:
            why = "hurray.Tensor() has no byte_offset argument"
            return why, why
        if not all(b["default_align"] for b in item["buffers"]):
            why = "hurray.Tensor() has no buffer alignment argument (64, or 1 when empty)"
            return why, why
        if len({b["memory"] for b in item["buffers"]}) > 1:
            why = "one Device per tensor: buffers cannot differ in memory class"
            return why, why
    for _, (ty, v) in case["kv"]:
        if ty in ("uint64", "array:uint64"):
            return "save(kv=...) stores every int as int64: no uint64 values", None
        if ty.startswith("array:") and not v:
            return "save(kv=...) refuses empty lists (no element type)", None
    return None, None


def make_item(it: dict):
    """A hurray.Tensor, or a hurray.Composite of made members (their shards from
    the case, their roles through ``roles=``)."""
    if it["kind"] != "composite":
        return make_tensor(it)
    return hurray.Composite(
        it["rule"], shape=it["shape"], dtype=hurray.Dtype.from_name(it["dtype"]),
        members=[make_item(m) for m in it["members"]],
        combine_op=None if it["op"] == "none" else it["op"],
        roles=[m.get("role") for m in it["members"]])


def make_tensor(t: dict) -> hurray.Tensor:
    bufs = [b["bytes"] for b in t["buffers"]]
    device = hurray.Device("cpu", memory_class=t["buffers"][0]["memory"])
    shard = hurray.Shard(*t["shard"]) if t["shard"] else None
    return hurray.Tensor(bufs[0], hurray.Dtype.from_name(t["dtype"]), t["shape"], device,
                         aux_buffers=bufs[1:], layout=layout_of(t),
                         quantization=quant_of(t["quant"]),
                         statistics=stats_obj(t["stats"]), shard=shard)


def kv_value(ty: str, v):
    return v  # str, int, float, bool, bytes, and lists of them map one to one


def produce(cases: list[dict], out: str) -> int:
    os.makedirs(out, exist_ok=True)
    failed = 0
    for case in cases:
        no_file, no_stream = cannot_write(case)
        base = os.path.join(out, case["name"])
        try:
            tensors = None
            if no_file is None or no_stream is None:
                tensors = {it["name"]: make_item(it) for it in case["items"]}
            if no_file is None:
                kv = {k: kv_value(ty, v) for k, (ty, v) in case["kv"]}
                hurray.save(base + ".hrry", tensors, kv=kv or None)
            else:
                with open(base + ".hrry.na", "w") as f:
                    f.write(no_file + "\n")
            if no_stream is None:
                with hurray.StreamWriter(base + ".hrrys") as s:
                    for t in tensors.values():
                        s.write(t)
            else:
                with open(base + ".hrrys.na", "w") as f:
                    f.write(no_stream + "\n")
        except Exception as e:  # report and go on: the consumers will flag the gap
            print(f"python producer: case {case['name']}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            failed += 1
    return failed


# ---------------------------------------------------------------- consumer

NOTES = [
    "byte_offset and buffer alignment/sync mode are not in the Python API: checked only "
    "through NumPy views (dense layouts with a NumPy dtype)",
    "KV metadata is not checked: hurray.load() does not return it",
]

NUMPY = {"float16": "<f2", "float32": "<f4", "float64": "<f8", "int8": "i1", "uint8": "u1",
         "int16": "<i2", "uint16": "<u2", "int32": "<i4", "uint32": "<u4", "int64": "<i8",
         "uint64": "<u8", "complex64": "<c8", "complex128": "<c16"}


class Mismatch(Exception):
    pass


def same(what: str, want, got) -> None:
    if want != got:
        raise Mismatch(f"{what}: expected {want!r}, got {got!r}")


def same_f(what: str, want: float, got: float) -> None:
    if struct.pack("<d", want) != struct.pack("<d", got):
        raise Mismatch(f"{what}: expected {want!r}, got {got!r}")


def first_difference(what: str, want: bytes, got: bytes) -> None:
    if want == got:
        return
    n = sum(a != b for a, b in zip(want, got)) + abs(len(want) - len(got))
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            raise Mismatch(f"{what} byte {i}: expected 0x{a:02x}, got 0x{b:02x} "
                           f"({n} of {len(want)} bytes differ)")
    raise Mismatch(f"{what}: expected {len(want)} bytes, got {len(got)}")


def check_tiles(levels: list[list[str]], got) -> None:
    shape, outer, inner = levels[0]
    same("tile_shape", tuple(ints(shape)), tuple(got.tile_shape))
    o, os_ = order_name(outer)
    i, is_ = order_name(inner)
    same("outer_layout", o, got.outer_layout)
    same("inner_layout", i, got.inner_layout)
    same("outer_strides", tuple(os_) if os_ else None,
         tuple(got.outer_strides) if got.outer_strides is not None else None)
    same("inner_strides", tuple(is_) if is_ else None,
         tuple(got.inner_strides) if got.inner_strides is not None else None)
    if i == "tiled":
        check_tiles(levels[1:], got.inner_tiled)


def check_layout(t: dict, lay) -> None:
    kind, a = t["layout"][0], t["layout"][1:]
    tags = {"row_major": 1, "col_major": 2, "strided": 3, "tiled": 4, "morton": 5, "coo": 6,
            "csr": 7, "csc": 8, "csf": 9, "block_paged": 10, "hilbert": 0x40}
    same("layout tag", tags[kind], lay.tag)
    if kind == "strided":
        same("strides", tuple(ints(a[0])), tuple(lay.strides))
    elif kind == "tiled":
        check_tiles(t["tiles"], lay)
    elif kind == "morton":
        same("morton_bits", tuple(ints(a[0])), tuple(lay.morton_bits))
    elif kind == "hilbert":
        same("hilbert", (int(a[0]), int(a[1])), (lay.hilbert_order, lay.hilbert_rank))
    elif kind == "coo":
        same("nnz", int(a[0]), lay.nnz)
        same("is_sorted", a[1] == "sorted", lay.is_sorted)
    elif kind in ("csr", "csc"):
        same("nnz", int(a[0]), lay.nnz)
    elif kind == "csf":
        same("nnz", int(a[0]), lay.nnz)
        same("mode_order", tuple(ints(a[1])), tuple(lay.mode_order))
    elif kind == "block_paged":
        want = (int(a[0]), int(a[1]), 0, int(a[2]), a[3],
                None if a[4] == "none" else int(a[4]), "uint64" if a[5] == "u64" else "uint32")
        got = (lay.page_size, lay.num_pages, lay.paged_axis, lay.num_seqs, lay.kv_role,
               lay.layer_index, lay.block_table_index_type)
        same("block_paged fields", want, got)


def check_quant(q: list[str] | None, got) -> None:
    if q is None:
        same("quantization", None, got)
        return
    if got is None:
        raise Mismatch(f"quantization: expected {q[0]}, got none")
    s = q[0]
    if s == "per_tensor":
        same("scheme", "PerTensorAffine", type(got).__name__)
        same("scale", float(q[1]), got.scale)
        same("zero_point", int(q[2]), got.zero_point)
        return
    want_type = {"per_channel": "PerChannelAffine", "per_block": "PerBlockAffine",
                 "nf4": "NF4", "mxfp": "MXFP"}[s]
    same("scheme", want_type, type(got).__name__)
    same("axis", int(q[1]), got.axis)
    if s == "per_channel":
        same("scale_buffer_index", int(q[2]), got.scale_buffer_index)
        same("zero_point_buffer_index", None if q[3] == "none" else int(q[3]),
             got.zero_point_buffer_index)
        return
    same("block_size", int(q[2]), got.block_size)
    same("scale_buffer_index", int(q[3]), got.scale_buffer_index)
    if s == "per_block":
        same("zero_point_buffer_index", None if q[4] == "none" else int(q[4]),
             got.zero_point_buffer_index)
        same("scale_type", SCALE_TYPES[q[5]], got.scale_type.name)


def check_stats(s: dict | None, got) -> None:
    if s is None:
        same("statistics", None, got)
        return
    if got is None:
        raise Mismatch("statistics: expected a section, got none")
    same("statistics computed_mask", s["mask"], got.computed_mask)
    for key, attr in (("nnz", "nnz"), ("nm_n", "nm_n"), ("nm_m", "nm_m")):
        if key in s:
            same(f"statistics {attr}", s[key], getattr(got, attr))
    for key, attr in (("sparsity", "sparsity_ratio"), ("min", "value_min"),
                      ("max", "value_max"), ("absmax", "value_abs_max"),
                      ("mean", "value_mean"), ("stddev", "value_stddev")):
        if key in s:
            same_f(f"statistics {attr}", s[key], getattr(got, attr))
    if "has_nan" in s:
        same("statistics has_nan", bool(s["has_nan"]), got.has_nan)
        same("statistics has_inf", bool(s["has_inf"]), got.has_inf)


def check_view(t: dict, got: hurray.Tensor) -> None:
    """Dense tensors with a NumPy dtype: the zero-copy NumPy view shows the elements
    the case's bytes, byte_offset and strides say (this is where byte_offset shows)."""
    kind = t["layout"][0]
    if kind not in ("row_major", "col_major", "strided") or t["dtype"] not in NUMPY:
        return
    if t["quant"] is not None or any(d == 0 for d in t["shape"]):
        return
    dt = np.dtype(NUMPY[t["dtype"]])
    shape = t["shape"]
    if kind == "row_major":
        el = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    elif kind == "col_major":
        el = [int(np.prod(shape[:k])) for k in range(len(shape))]
    else:
        el = ints(t["layout"][1])
    want = np.lib.stride_tricks.as_strided(
        np.frombuffer(t["buffers"][0]["bytes"], dtype=np.uint8)[t["offset"]:].view(dt)
        if len(t["buffers"][0]["bytes"]) - t["offset"] >= dt.itemsize else
        np.zeros(0, dt), shape=shape, strides=[s * dt.itemsize for s in el])
    view = np.asarray(got)
    same("NumPy view shape", tuple(shape), view.shape)
    if want.tobytes() != view.tobytes():
        raise Mismatch("NumPy view elements differ from the case's bytes "
                       f"(byte_offset {t['offset']}, element strides {el})")


def check_tensor(t: dict, got) -> None:
    try:
        if not isinstance(got, hurray.Tensor):
            raise Mismatch(f"expected a tensor, got {type(got).__name__}")
        same("dtype", t["dtype"], got.dtype.name)
        same("shape", tuple(t["shape"]), tuple(got.shape))
        check_layout(t, got.layout)
        same("buffer count", len(t["buffers"]), got.buffer_count)
        same("device", "cpu", got.device.kind)
        same("memory class", t["buffers"][0]["memory"] if t["buffers"] else "standard",
             got.device.memory_class)
        check_quant(t["quant"], got.quantization)
        shard = got.shard
        same("shard", t["shard"] and tuple(map(tuple, t["shard"])),
             shard and (tuple(shard.parent_shape), tuple(shard.shard_offset)))
        check_stats(t["stats"], got.statistics)
        for i, b in enumerate(t["buffers"]):
            first_difference(f"buffer {i}", b["bytes"], np.asarray(got.buffer(i)).tobytes())
        same("role", t["role"], got.role)
        check_view(t, got)
    except Mismatch as e:
        raise Mismatch(f"tensor {t['name']!r}: {e}") from None


def check_item(it: dict, got) -> None:
    """A tensor as check_tensor; a composite's head fields, then every member."""
    if it["kind"] != "composite":
        return check_tensor(it, got)
    try:
        if not isinstance(got, hurray.Composite):
            raise Mismatch(f"expected a composite, got {type(got).__name__}")
        same("rule", it["rule"], got.composition_rule)
        same("combine op", None if it["op"] == "none" else it["op"], got.combine_op)
        same("dtype", it["dtype"], got.dtype.name)
        same("shape", tuple(it["shape"]), tuple(got.shape))
        same("member count", it["count"], len(got))
        shard = got.shard
        same("shard", it["shard"] and tuple(map(tuple, it["shard"])),
             shard and (tuple(shard.parent_shape), tuple(shard.shard_offset)))
        same("role", it.get("role"), got.role)
    except Mismatch as e:
        raise Mismatch(f"composite {it['name']!r}: {e}") from None
    for m, g in zip(it["members"], got):
        check_item(m, g)


def has_composite(case: dict) -> bool:
    return any(it["kind"] == "composite" for it in case["items"])


def check_file(case: dict, path: str) -> None:
    if has_composite(case):
        return check_file_items(case, path)
    try:
        got = hurray.load(path)
    except Exception as e:
        raise Mismatch(f"load: {type(e).__name__}: {e}") from None
    want: list[str] = []
    for it in case["items"]:
        names(it, want)
    same("tensor names", want, list(got.keys()))
    for it in case["items"]:
        check_tensor(it, got[it["name"]])


def check_file_items(case: dict, path: str) -> None:
    """A file with composites: hurray.load() returns tensors only, so every
    top-level item is read with FileReader.item (tensors and composites)."""
    try:
        with hurray.FileReader(path) as r:
            same("item names", [it["name"] for it in case["items"]], r.item_names)
            for it in case["items"]:
                check_item(it, r.item(it["name"]))
    except Mismatch:
        raise
    except Exception as e:
        raise Mismatch(f"FileReader: {type(e).__name__}: {e}") from None


def check_stream(case: dict, path: str) -> None:
    """Iterating a StreamReader yields tensors (and refuses a composite, as the
    reference does), so a stream with composites is read with items()."""
    got = []
    try:
        with hurray.StreamReader(path) as r:
            for t in (r.items() if has_composite(case) else r):
                got.append(t)
    except Exception as e:
        raise Mismatch(f"item {len(got)}: {type(e).__name__}: {e}") from None
    if len(got) != len(case["items"]):
        raise Mismatch(f"expected {len(case['items'])} items, the stream holds {len(got)}")
    for it, t in zip(case["items"], got):
        check_item(it, t)


def consume(cases: list[dict], dirs: list[str]) -> None:
    for n in NOTES:
        print(f"note\t{n}")
    for d in dirs:
        producer = os.path.basename(os.path.normpath(d))
        for case in cases:
            for ext, container in (("hrry", "file"), ("hrrys", "stream")):
                base = os.path.join(d, f"{case['name']}.{ext}")
                line = f"result\t{producer}\t{container}\t{case['name']}\t"
                if os.path.exists(base + ".na"):
                    with open(base + ".na") as f:
                        print(line + "na\tproducer: " + f.read().strip())
                    continue
                try:
                    if not os.path.exists(base):
                        raise Mismatch(f"no output {base}")
                    (check_file if ext == "hrry" else check_stream)(case, base)
                    print(line + "pass\t")
                except Mismatch as e:
                    print(line + "fail\t" + str(e).replace("\t", " ").replace("\n", " "))
                except Exception as e:  # a crash in a check is a failure of the cell
                    print(line + f"fail\t{type(e).__name__}: {e}".replace("\n", " "))


# ---------------------------------------------------------------- demo


#: How many more times ``views`` opens and views the file after the first pass; the
#: best of them is the ``warm`` figure.
WARM_RUNS = 200


def open_and_view(path: str) -> tuple[dict, dict]:
    """One pass: ``hurray.load`` (memory-mapped) and a zero-copy NumPy view of every
    tensor (``numpy.asarray(t, copy=False)``; a uint8 view of each buffer for dtypes
    NumPy lacks). Returns the tensors and the arrays, by name."""
    tensors = hurray.load(path)
    arrays = {}
    for name, t in tensors.items():
        try:
            arrays[name] = [np.asarray(t, copy=False)]
        except (hurray.UnsupportedError, hurray.CopyRequiredError, BufferError):
            arrays[name] = [np.asarray(t.buffer(i), copy=False) for i in range(t.buffer_count)]
    return tensors, arrays


def views(path: str) -> None:
    """Opens FILE and views every tensor (``open_and_view``), then prints
    ``view NAME CRC32`` (over the buffers' bytes, in order) and ``time SECONDS``
    (open + views only, this first pass in a fresh process). Then ``WARM_RUNS`` more
    passes in this process and ``warm SECONDS``: the fastest (releasing the previous
    pass's objects is outside the timing, as in the first)."""
    t0 = time.perf_counter()
    tensors, arrays = open_and_view(path)
    secs = time.perf_counter() - t0
    for name, t in tensors.items():
        if any(a.base is None for a in arrays[name]):
            raise SystemExit(f"{name}: numpy.asarray made a copy")
        crc = 0
        for i in range(t.buffer_count):
            crc = zlib.crc32(memoryview(np.asarray(t.buffer(i), copy=False)), crc)
        print(f"view\t{name}\t{crc & 0xFFFFFFFF:08x}")
    print(f"time\t{secs:.6f}")
    count = len(arrays)
    del tensors, arrays
    warm = float("inf")
    for _ in range(WARM_RUNS):
        t0 = time.perf_counter()
        tensors, arrays = open_and_view(path)
        warm = min(warm, time.perf_counter() - t0)
        if len(arrays) != count:
            raise SystemExit(f"a warm pass listed {len(arrays)} tensors, the first {count}")
        del tensors, arrays
    print(f"warm\t{warm:.6f}")


def metadata(path: str) -> None:
    """Opens PATH with hurray.load (every tensor, index order) and hurray.FileReader
    (names and every KV value in full), and prints what it read, like every
    language's metadata command. A KV array past the library's whole-value bound is
    refused (a ``kv_refused`` line): memory stays bounded."""
    tensors = hurray.load(path)
    elements = value_bytes = 0
    entries = 0
    with hurray.FileReader(path) as f:
        try:
            kv = f.kv
        except hurray.FileError as e:
            print(f"kv_refused\t{e}")
            kv = {}
        for v in kv.values():
            entries += 1
            for x in v if isinstance(v, list) else [v]:
                elements += 1
                if isinstance(x, (str, bytes)):
                    value_bytes += len(x.encode() if isinstance(x, str) else x)
    print(f"kv_entries\t{entries}\nkv_elements\t{elements}\nkv_value_bytes\t{value_bytes}")
    print(f"tensors\t{len(tensors)}\nname_bytes\t{sum(len(n.encode()) for n in tensors)}")


def tag_names() -> None:
    """Prints every element-type and layout tag (0..255) as hurray.type_name and
    hurray.layout_name render it, one ``type|layout<TAB>0x2a<TAB>NAME`` line each
    (cargo xtask matrix compares these lines across languages)."""
    lines = [f"type\t0x{t:02x}\t{hurray.type_name(t)}" for t in range(256)]
    lines += [f"layout\t0x{t:02x}\t{hurray.layout_name(t)}" for t in range(256)]
    sys.stdout.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------- network column


def net_cannot(case: dict) -> str | None:
    """Why the Python client cannot carry the case over the network (the fetched
    items, tensors and composites, are written as received, so only what
    hurray.save and hurray.Client cannot express matters)."""
    for _, (ty, v) in case["kv"]:
        if ty in ("uint64", "array:uint64"):
            return "save(kv=...) stores every int as int64: no uint64 values"
        if ty.startswith("array:") and not v:
            return "save(kv=...) refuses empty lists (no element type)"
    return None


def net_get(addr: str, cases: list[dict], out: str) -> int:
    """GET "CASE:NAME" for every item of every case and write OUT/CASE.hrry with the
    fetched tensors in producer order and the writer options of `produce`."""
    os.makedirs(out, exist_ok=True)
    failed = 0
    with hurray.connect(addr) as client:
        for case in cases:
            base = os.path.join(out, case["name"] + ".hrry")
            why = net_cannot(case)
            if why is not None:
                with open(base + ".na", "w") as f:
                    f.write(why + "\n")
                continue
            try:
                tensors = {it["name"]: client.get(f"{case['name']}:{it['name']}")
                           for it in case["items"]}
                kv = {k: kv_value(ty, v) for k, (ty, v) in case["kv"]}
                hurray.save(base, tensors, kv=kv or None)
            except Exception as e:  # report and go on: the harness flags the gap
                print(f"python net-get: case {case['name']}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                failed += 1
    return failed


def net_put(addr: str, cases: list[dict], src: str) -> int:
    """PUT every top-level item of SRC/CASE.hrry under "CASE:NAME"; a case the client
    cannot carry is reported on stderr (``na CASE: reason``) and left out."""
    failed = 0
    with hurray.connect(addr) as client:
        for case in cases:
            why = net_cannot(case)
            path = os.path.join(src, case["name"] + ".hrry")
            if why is None and not os.path.exists(path):
                why = f"no {path}"
            if why is not None:
                print(f"na {case['name']}: {why}", file=sys.stderr)
                continue
            try:
                with hurray.FileReader(path) as r:
                    for it in case["items"]:
                        client.put(f"{case['name']}:{it['name']}", r.item(it["name"]))
            except Exception as e:
                print(f"python net-put: case {case['name']}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                failed += 1
    return failed


def net_views(addr: str, path: str) -> None:
    """The demo's network step: reads FILE only for its tensor names (index order),
    GETs each over one connection and prints ``view NAME CRC32`` (as ``views``: over
    the buffers' bytes, in order) and ``time SECONDS`` (connect plus every GET)."""
    with hurray.FileReader(path) as r:
        names = list(r.names)
    t0 = time.perf_counter()
    with hurray.connect(addr) as client:
        got = [(name, client.get(name)) for name in names]
    secs = time.perf_counter() - t0
    for name, t in got:
        crc = 0
        for i in range(t.buffer_count):
            crc = zlib.crc32(memoryview(np.asarray(t.buffer(i), copy=False)), crc)
        print(f"view\t{name}\t{crc & 0xFFFFFFFF:08x}")
    print(f"time\t{secs:.6f}")


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "produce":
        with open(argv[1]) as f:
            return 1 if produce(parse(f.read()), argv[2]) else 0
    if len(argv) >= 2 and argv[0] == "consume":
        with open(argv[1]) as f:
            consume(parse(f.read()), argv[2:])
        return 0
    if len(argv) == 2 and argv[0] == "views":
        views(argv[1])
        return 0
    if len(argv) == 2 and argv[0] == "hostile":
        return hostile(argv[1])
    if len(argv) == 2 and argv[0] == "metadata":
        metadata(argv[1])
        return 0
    if len(argv) == 4 and argv[0] in ("net-get", "net-put"):
        with open(argv[2]) as f:
            cases = parse(f.read())
        run = net_get if argv[0] == "net-get" else net_put
        return 1 if run(argv[1], cases, argv[3]) else 0
    if len(argv) == 3 and argv[0] == "net-views":
        net_views(argv[1], argv[2])
        return 0
    if argv == ["names"]:
        tag_names()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
