"""The shared golden vectors (../shared/conformance): the file loads as the manifest
says, in index order; every non-composite descriptor vector, followed by buffers of
the sizes it declares (zeroed, or holding valid index and scale contents where the
layout or scheme has content rules), reads back from a stream as the manifest says."""

import json

import pytest

import hurray
from conftest import REPO_ROOT

CONF = REPO_ROOT.parent / "shared" / "conformance"
pytestmark = pytest.mark.skipif(not (CONF / "manifest.json").exists(), reason="no ../shared/conformance")


def manifest():
    return json.loads((CONF / "manifest.json").read_text()) if (CONF / "manifest.json").exists() else {"files": [], "descriptors": []}


@pytest.mark.parametrize("entry", manifest()["files"], ids=lambda e: e["file"])
def test_golden_files(entry):
    got = hurray.load(str(CONF / entry["file"]))
    assert list(got) == [t["name"] for t in entry["tensors"]]
    for t in entry["tensors"]:
        x = got[t["name"]]
        assert (list(x.shape), x.dtype.name, x.dtype.__hash__()) == (t["shape"], t["element_type"], t["element_type_tag"])
        assert x.buffer(0).shape == (t["data_bytes"],)


def valid_buffers(name, sizes):
    """Zeroed buffers of `sizes`, except that the vectors with content rules get valid
    contents (readers refuse a CSR whose row_ptr does not end at nnz, or a zero scale)."""
    bufs = [bytes(n) for n in sizes]
    if name.endswith("csr_f32_3x3.bin"):  # nnz 2 over 3 rows: cols [0, 1], row_ptr [0, 1, 2, 2]
        u64 = lambda v: b"".join(x.to_bytes(8, "little") for x in v)
        bufs[1], bufs[2] = u64([0, 1]), u64([0, 1, 2, 2])
    if name.endswith("quant_per_block_int4_128x128.bin"):  # f16 scales of 1.0
        bufs[1] = b"\x00\x3c" * (sizes[1] // 2)
    return bufs


@pytest.mark.parametrize("entry", [d for d in manifest()["descriptors"] if d["expect"].get("layout_tag") != 0x0B],
                         ids=lambda e: e["file"])
def test_golden_descriptors_through_a_stream(entry):
    exp = entry["expect"]
    raw = (CONF / entry["file"]).read_bytes()
    stream = raw + b"".join(valid_buffers(entry["file"], exp["buffer_byte_sizes"]))
    (t,) = list(hurray.StreamReader(stream))
    assert [None if d is None else d for d in t.shape] == exp["shape"]
    assert t.dtype.name == exp["element_type"] and t.layout.tag == exp["layout_tag"]
    assert [t.buffer(i).shape[0] for i in range(t.buffer_count)] == exp["buffer_byte_sizes"]
    assert (t.quantization is not None) == exp["has_quantization"]
    assert (t.shard is not None) == exp["has_shard"]
    assert t._descriptor_bytes() == raw
