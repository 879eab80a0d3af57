//! Helpers shared by the fuzz targets in `fuzz_targets/`: reading every byte of an
//! item, driving a stream decoder in caller-chosen chunks, re-encoding items, and a
//! reader that hands out bytes in small pieces.
//!
//! Each target asserts only what must hold for every input: no panic, no crash, no
//! out-of-bounds read (AddressSanitizer), and agreement between two ways of reading
//! or writing the same bytes. A failed assertion is a finding like a crash.

use hurray_core::{DecodeOptions, TensorDescriptor};
use hurray_io::file::KvEntry;
use hurray_io::stream::StreamEncoder;
use hurray_io::{BufferPool, Item, Limits, StreamDecoder, StreamReader, Tensor};
use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Reads every byte of every buffer of every tensor of `item` (heads and members),
/// so that buffer-content checks and any bad buffer view are reached; returns a
/// checksum the optimiser cannot drop.
pub fn touch(item: &Item) -> u64 {
    let mut sum = 0u64;
    item.for_each_tensor(&mut |t| {
        let d = t.descriptor();
        sum = sum.wrapping_add(d.rank() as u64);
        black_box(d.storage());
        assert_eq!(
            t.buffers().len(),
            d.buffers.len(),
            "a tensor has one buffer per buffer-table entry"
        );
        for (b, h) in t.buffers().iter().zip(&d.buffers) {
            assert_eq!(b.len() as u64, h.byte_size, "buffer length = byte_size");
            for &x in b.as_slice() {
                sum = sum.wrapping_mul(31).wrapping_add(u64::from(x));
            }
        }
        // A descriptor a reader accepted encodes again.
        let bytes = d.encode().expect("an accepted descriptor re-encodes");
        sum = sum.wrapping_add(bytes.len() as u64);
    });
    black_box(sum)
}

/// Whether two descriptors are the same value, NaN fields compared bit for bit
/// (derived equality says NaN != NaN): equal, or equal encodings.
pub fn same_descriptor(a: &TensorDescriptor, b: &TensorDescriptor) -> bool {
    a == b || matches!((a.encode(), b.encode()), (Ok(x), Ok(y)) if x == y)
}

fn same_tensor(a: &Tensor, b: &Tensor) -> bool {
    same_descriptor(a.descriptor(), b.descriptor()) && a.buffers() == b.buffers()
}

/// Whether two items are the same (descriptors as [`same_descriptor`], buffers by
/// content, members in order).
pub fn same_item(a: &Item, b: &Item) -> bool {
    match (a, b) {
        (Item::Tensor(x), Item::Tensor(y)) => same_tensor(x, y),
        (Item::Composite(x), Item::Composite(y)) => {
            same_tensor(&x.head, &y.head)
                && x.members.len() == y.members.len()
                && x.members
                    .iter()
                    .zip(&y.members)
                    .all(|(m, n)| same_item(m, n))
        }
        _ => false,
    }
}

/// [`same_item`] over two lists.
pub fn same_items<'a>(
    a: impl ExactSizeIterator<Item = &'a Item>,
    b: impl ExactSizeIterator<Item = &'a Item>,
) -> bool {
    a.len() == b.len() && a.zip(b).all(|(x, y)| same_item(x, y))
}

/// Whether two KV lists are the same, floats compared by their printed form (so a
/// NaN equals a NaN).
pub fn same_kv(a: &[KvEntry], b: &[KvEntry]) -> bool {
    a == b || format!("{a:?}") == format!("{b:?}")
}

/// Splits fuzz input into a 4-byte control prefix and the body (all of a shorter
/// input is control).
pub fn split_control(data: &[u8]) -> ([u8; 4], &[u8]) {
    let mut ctl = [0u8; 4];
    let n = data.len().min(4);
    ctl[..n].copy_from_slice(&data[..n]);
    (ctl, &data[n..])
}

/// How bytes reach a [`StreamDecoder`].
#[derive(Clone, Copy, Debug)]
pub struct Feeding {
    /// Chunk sizes, used in turn; 0 means "everything the decoder asks for".
    pub chunks: [u8; 3],
    /// Use [`StreamDecoder::feed`] instead of `demand`/`advance`.
    pub use_feed: bool,
    /// Allocate buffers above 4 KiB in growing steps (`with_eager_alloc(4096)`).
    pub small_eager: bool,
    /// Decode descriptors permissively.
    pub permissive: bool,
    /// Take buffers from a pool shared by every run of the process, so allocations
    /// come back holding the bytes of earlier inputs.
    pub pooled: bool,
    /// Read through the blocking [`StreamReader`] over a [`Trickle`] instead.
    pub blocking: bool,
}

impl Feeding {
    /// Everything at once, default decoder.
    pub const WHOLE: Feeding = Feeding {
        chunks: [0; 3],
        use_feed: false,
        small_eager: false,
        permissive: false,
        pooled: false,
        blocking: false,
    };

    /// The feeding a control prefix selects: byte 0 holds flags (bit 0 `use_feed`,
    /// 1 `small_eager`, 2 `pooled`, 3 `blocking`), bytes 1–3 chunk sizes.
    pub fn from_control(ctl: [u8; 4]) -> Feeding {
        Feeding {
            chunks: [ctl[1], ctl[2], ctl[3]],
            use_feed: ctl[0] & 1 != 0,
            small_eager: ctl[0] & 2 != 0,
            permissive: false,
            pooled: ctl[0] & 4 != 0,
            blocking: ctl[0] & 8 != 0,
        }
    }
}

/// What a decoder made of a byte stream: the items in order, and how it ended (the
/// error message, which names rule and offset).
#[derive(Debug)]
pub struct Decoded {
    /// Completed items, in stream order.
    pub items: Vec<Item>,
    /// `Ok` for a clean end, else the error's text.
    pub end: Result<(), String>,
}

impl Decoded {
    /// Same items (as [`same_item`]) and the same end.
    pub fn same(&self, other: &Decoded) -> bool {
        self.end == other.end && same_items(self.items.iter(), other.items.iter())
    }
}

/// Decodes `body` as a Hurray stream fed as `how` says.
pub fn decode_stream(body: &[u8], how: Feeding) -> Decoded {
    let mut dec = StreamDecoder::new(Limits::default());
    if how.small_eager {
        dec = dec.with_eager_alloc(4096);
    }
    if how.permissive {
        dec = dec.with_decode_options(DecodeOptions::permissive());
    }
    if how.pooled {
        static POOL: OnceLock<BufferPool> = OnceLock::new();
        dec = dec.with_pool(POOL.get_or_init(|| BufferPool::new(8 << 20)).clone());
    }
    if how.blocking {
        let mut items = Vec::new();
        let mut end = Ok(());
        for r in StreamReader::with_decoder(Trickle::new(body), dec) {
            match r {
                Ok(item) => items.push(item),
                Err(e) => end = Err(e.to_string()),
            }
        }
        return Decoded { items, end };
    }
    let mut items = Vec::new();
    let mut err = None;
    let mut drain = |dec: &mut StreamDecoder, err: &mut Option<String>| {
        while let Some(r) = dec.next_item() {
            match r {
                Ok(item) => items.push(item),
                Err(e) => *err = Some(e.to_string()),
            }
        }
    };
    let mut rest = body;
    let mut turn = 0usize;
    while !rest.is_empty() {
        let chunk = match how.chunks[turn % 3] {
            0 => rest.len(),
            n => usize::from(n).min(rest.len()),
        };
        turn += 1;
        if how.use_feed {
            let used = dec.feed(&rest[..chunk]);
            assert!(used <= chunk);
            rest = &rest[used..];
            if used < chunk {
                break; // failed or finished
            }
        } else {
            let want = dec.demand();
            if want.is_empty() {
                break;
            }
            let n = want.len().min(chunk);
            want[..n].copy_from_slice(&rest[..n]);
            dec.advance(n);
            rest = &rest[n..];
        }
        drain(&mut dec, &mut err);
    }
    let fin = dec.finish();
    drain(&mut dec, &mut err);
    let end = match (err, fin) {
        (Some(e), _) => Err(e),
        (None, Err(e)) => Err(e.to_string()),
        (None, Ok(())) => Ok(()),
    };
    Decoded { items, end }
}

/// The stream bytes of `item` from a [`StreamEncoder`] with default limits.
pub fn encode_item(item: &Item) -> hurray_io::Result<Vec<u8>> {
    let mut enc = StreamEncoder::new(Limits::default());
    let e = enc.encode_item(item)?;
    let mut out = Vec::with_capacity(e.len() as usize);
    for c in e.chunks() {
        out.extend_from_slice(c);
    }
    assert_eq!(out.len() as u64, e.len(), "Encoded::len counts every chunk");
    Ok(out)
}

/// Asserts that `item` survives a stream round trip: it encodes, and its bytes
/// decode to exactly one equal item with a clean end.
pub fn assert_stream_round_trip(item: &Item) {
    let bytes = encode_item(item).expect("an item a reader accepted encodes");
    let back = decode_stream(&bytes, Feeding::WHOLE);
    assert_eq!(back.end, Ok(()), "re-encoded stream decodes cleanly");
    assert_eq!(back.items.len(), 1, "one item in, one item out");
    assert!(
        same_item(&back.items[0], item),
        "round trip changed the item"
    );
}

/// A reader over `bytes` that returns at most a few bytes per call, cycling through
/// the sizes 1, 7, 64, 4093 and 3, so that readers cannot rely on full reads.
pub struct Trickle<'a> {
    bytes: &'a [u8],
    turn: usize,
}

impl<'a> Trickle<'a> {
    /// A trickling reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Trickle<'a> {
        Trickle { bytes, turn: 0 }
    }
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const SIZES: [usize; 5] = [1, 7, 64, 4093, 3];
        let n = SIZES[self.turn % SIZES.len()]
            .min(buf.len())
            .min(self.bytes.len());
        self.turn += 1;
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// A scratch directory for the whole process: `hurray-fuzz-<pid>` under `/dev/shm`
/// when it exists (so no disk is touched), else under the temporary directory.
/// libFuzzer ends the process with `exit`, which runs no destructors, so instead
/// each process first removes the directories of processes that no longer run
/// (on Linux, where `/proc/<pid>` tells).
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let proc = Path::new("/proc/self").exists();
        if let Ok(entries) = std::fs::read_dir(&base) {
            for e in entries.flatten() {
                let name = e.file_name();
                let pid = name.to_str().and_then(|n| n.strip_prefix("hurray-fuzz-"));
                if let Some(pid) = pid.filter(|p| p.bytes().all(|b| b.is_ascii_digit())) {
                    if proc && !Path::new("/proc").join(pid).exists() {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        let dir = base.join(format!("hurray-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    })
}

/// Writes `data` to a file named `input_name` in the [`scratch_dir`], runs `hurray
/// convert` on it into an HRRYFILE and checks the outcome. A failed conversion
/// leaves no output. A successful one: opens with [`hurray_io::FileReader`], holds
/// the number of tensors the summary reports (known up front for every input but a
/// stream), every buffer reads, `hurray validate` accepts it, and it converts on to
/// safetensors, which converts back to an HRRYFILE with the same tensors.
pub fn convert_and_check(data: &[u8], input_name: &str) {
    use hurray_cli::convert::{convert, ConvertOptions};
    // Scratch outputs: no fsync, no data CRC, the format the extension names.
    let scratch = || ConvertOptions {
        to: None,
        durable: false,
        data_crc32c: false,
    };
    let dir = scratch_dir();
    let input = dir.join(input_name);
    let output = dir.join("out.hrry");
    std::fs::write(&input, data).expect("write the input");
    let _ = std::fs::remove_file(&output);
    let summary = match convert(&input, &output, scratch()) {
        Ok(s) => s,
        Err(_) => {
            assert!(!output.exists(), "a failed convert leaves no output");
            return;
        }
    };
    let r = hurray_io::FileReader::open(&output).expect("a converted file opens");
    if summary.from != hurray_cli::detect::Format::Stream {
        assert_eq!(
            r.len(),
            summary.tensors,
            "summary counts the tensors written"
        );
    }
    let items = r
        .items()
        .expect("what hurray convert wrote passes the content checks");
    for (_, item) in &items {
        touch(item);
    }
    if let Err(e) = hurray_cli::validate::validate(&output) {
        panic!("hurray validate refuses what hurray convert wrote: {e}");
    }
    // On to safetensors (which holds plain tensors only), and back.
    let st = dir.join("out.safetensors");
    let back = dir.join("back.hrry");
    let _ = std::fs::remove_file(&st);
    if convert(&output, &st, scratch()).is_ok() {
        convert(&st, &back, scratch()).expect("a written safetensors file converts back");
        let b = hurray_io::FileReader::open(&back).expect("the round trip opens");
        let before: Vec<&str> = r.names().collect();
        let after: Vec<&str> = b.names().collect();
        assert_eq!(
            before.len(),
            after.len(),
            "safetensors round trip changed the count"
        );
        for name in after {
            let (x, y) = (
                r.tensor(name).expect("contents were checked above"),
                b.tensor(name).expect("a converted file's contents pass"),
            );
            let (Some(x), Some(y)) = (x, y) else {
                panic!("tensor {name:?} lost in the safetensors round trip");
            };
            assert!(
                x.buffers() == y.buffers(),
                "tensor {name:?} changed in the safetensors round trip"
            );
        }
    } else {
        assert!(!st.exists(), "a failed convert leaves no output");
    }
}
