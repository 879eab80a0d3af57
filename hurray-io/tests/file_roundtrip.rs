//! Round trips through the HRRYFILE container: tensors of every layout family,
//! quantized and empty tensors, composites of every rule (nested too) and KV of
//! every value type, written by the blocking, in-memory and async writers, read back
//! memory-mapped, from bytes and sequentially.

#[path = "stream_common/mod.rs"]
mod stream_common;

use hurray_core::ElementType;
use hurray_io::file::{
    flags, CrcStatus, FileReader, FileWriter, FileWriterTo, KvArray, KvEntry, KvValue,
    SequentialReader, WriteOptions,
};
use hurray_io::{Composite, FormatRule, Item, Tensor};
use std::path::Path;
use stream_common::*;

/// KV of every value type, arrays of every element type (one empty) included.
fn every_kv() -> Vec<KvEntry> {
    let e = |k: &str, v| KvEntry {
        key: k.into(),
        value: v,
    };
    vec![
        e("string", KvValue::String("grüße 🌍".into())),
        e("empty_string", KvValue::String(String::new())),
        e("int64", KvValue::Int64(i64::MIN)),
        e("uint64", KvValue::UInt64(u64::MAX)),
        e("float64", KvValue::Float64(-0.125)),
        e("bool_true", KvValue::Bool(true)),
        e("bool_false", KvValue::Bool(false)),
        e("bytes", KvValue::Bytes(vec![0, 1, 0xFF, b'H', b'R'])),
        e(
            "arr_string",
            KvValue::Array(KvArray::String(vec!["a".into(), "".into(), "ç".into()])),
        ),
        e("arr_int64", KvValue::Array(KvArray::Int64(vec![-1, 0, 7]))),
        e(
            "arr_uint64",
            KvValue::Array(KvArray::UInt64(vec![u64::MAX])),
        ),
        e(
            "arr_float64",
            KvValue::Array(KvArray::Float64(vec![1.5, f64::INFINITY])),
        ),
        e(
            "arr_bool",
            KvValue::Array(KvArray::Bool(vec![true, false, true])),
        ),
        e(
            "arr_bytes",
            KvValue::Array(KvArray::Bytes(vec![vec![], vec![9; 17]])),
        ),
        e("arr_empty", KvValue::Array(KvArray::Float64(vec![]))),
        e("ключ", KvValue::UInt64(3)),
    ]
}

/// Composites of every rule, with their head names.
fn composites() -> Vec<(&'static str, Composite)> {
    vec![
        ("partition", partition()),
        ("overlay", overlay()),
        ("group", group()),
        ("nested", nested()),
        ("empty_group", empty_group()),
        ("deep8", deep_group(8)),
    ]
}

/// What a file should hold: top-level items with names, in write order.
fn content() -> Vec<(String, Item)> {
    let mut v: Vec<(String, Item)> = tensors()
        .into_iter()
        .map(|(n, t)| (n.to_owned(), Item::Tensor(t)))
        .collect();
    for (n, c) in composites() {
        v.push((n.to_owned(), Item::Composite(c)));
    }
    v
}

fn write_to_vec(opts: WriteOptions, items: &[(String, Item)], kv: &[KvEntry]) -> Vec<u8> {
    let mut w = FileWriterTo::new(Vec::new(), opts).unwrap();
    for e in kv {
        w.add_kv(e.key.clone(), e.value.clone()).unwrap();
    }
    for (n, item) in items {
        match item {
            Item::Tensor(t) => w.write_tensor(n, t).unwrap(),
            Item::Composite(c) => w.write_composite(n, c).unwrap(),
        }
    }
    w.finish().unwrap()
}

fn write_to_path(path: &Path, opts: WriteOptions, items: &[(String, Item)], kv: &[KvEntry]) {
    let mut w = FileWriter::create(path, opts).unwrap();
    for (n, item) in items {
        match item {
            Item::Tensor(t) => w.write_tensor(n, t).unwrap(),
            Item::Composite(c) => w.write_composite(n, c).unwrap(),
        }
    }
    for e in kv {
        w.add_kv(e.key.clone(), e.value.clone()).unwrap();
    }
    w.finish().unwrap();
}

/// Checks a random-access reader against what was written.
fn check_reader(r: &FileReader, want: &[(String, Item)], kv: &[KvEntry]) {
    let got = r.items().unwrap();
    assert_eq!(got.len(), want.len());
    for ((gn, gi), (wn, wi)) in got.iter().zip(want) {
        assert_eq!(gn, wn);
        assert_eq!(gi, wi, "item {wn} differs");
        assert_aligned(gi);
        assert_eq!(r.item(wn).unwrap().as_ref(), Some(wi));
    }
    assert_eq!(r.kv().to_vec(), kv);
    for e in kv {
        assert_eq!(r.kv_get(&e.key).unwrap(), e.value);
    }
    assert_eq!(r.kv_get("missing"), None);
    assert!(r.tensor("missing").unwrap().is_none());
    // Every buffer lies at a multiple of the data alignment in the file.
    let a = r.info().data_buffer_alignment() as usize;
    let base = r.bytes().as_ptr() as usize;
    for (name, t) in r.tensors() {
        let t = t.unwrap();
        assert_eq!(r.descriptor(name).as_deref(), Some(t.descriptor()));
        for b in t.buffers() {
            assert_eq!((b.as_slice().as_ptr() as usize - base) % a, 0, "{name}");
        }
    }
    // The top-level walk names the same items, without building them.
    let c = r.catalog();
    let top: Vec<(String, bool)> = c
        .top_level()
        .map(|(i, composite)| (c.entry(i).unwrap().name.to_owned(), composite))
        .collect();
    let want_top: Vec<(String, bool)> = want
        .iter()
        .map(|(n, i)| (n.clone(), matches!(i, Item::Composite(_))))
        .collect();
    assert_eq!(top, want_top);
    // Names cover every tensor, heads and members included.
    let count: usize = want.iter().map(|(_, i)| i.tensor_count()).sum();
    assert_eq!(r.len(), count);
    assert_eq!(r.names().count(), count);
}

fn check_sequential(bytes: &[u8], want: &[(String, Item)], kv: &[KvEntry]) {
    let all = SequentialReader::new(bytes).unwrap().read_all().unwrap();
    assert_eq!(all.items.len(), want.len());
    for ((gn, gi), (wn, wi)) in all.items.iter().zip(want) {
        assert_eq!(gn, wn);
        assert_eq!(gi, wi, "item {wn} differs (sequential)");
        assert_aligned(gi);
    }
    assert_eq!(all.kv, kv);
}

#[test]
fn blocking_path_writer_then_mmap_bytes_and_sequential_readers() {
    let items = content();
    let kv = every_kv();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.hrry");
    write_to_path(&path, WriteOptions::default(), &items, &kv);
    // Only the file remains: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);

    let mapped = FileReader::open(&path).unwrap();
    check_reader(&mapped, &items, &kv);
    assert_eq!(
        mapped.info().crc,
        CrcStatus::Verified(mapped.info().trailer.index_crc32c)
    );
    // KV was added after the first tensor: the flag stays clear (A2), KV still found.
    assert_eq!(mapped.info().flags(), flags::HAS_INDEX_CRC32C);

    let bytes = std::fs::read(&path).unwrap();
    check_reader(&FileReader::from_bytes(&bytes).unwrap(), &items, &kv);
    check_sequential(&bytes, &items, &kv);
    // The in-memory writer writes the same bytes.
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    for (n, item) in &items {
        match item {
            Item::Tensor(t) => w.write_tensor(n, t).unwrap(),
            Item::Composite(c) => w.write_composite(n, c).unwrap(),
        }
    }
    for e in &kv {
        w.add_kv(e.key.clone(), e.value.clone()).unwrap();
    }
    assert!(w.finish().unwrap() == bytes);
}

#[test]
fn readers_and_writers_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<FileReader>();
    send_sync::<hurray_io::file::Catalog>();
    send::<FileWriter>();
    send::<FileWriterTo<Vec<u8>>>();
    send::<SequentialReader<std::fs::File>>();
}

#[test]
fn mapped_tensors_outlive_the_reader() {
    let items = content();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.hrry");
    write_to_path(&path, WriteOptions::default(), &items, &[]);
    let r = FileReader::open(&path).unwrap();
    let t = r.tensor("large_odd").unwrap().unwrap();
    let whole = r.items().unwrap();
    drop(r);
    std::fs::remove_file(&path).unwrap(); // the mapping survives unlinking too
    let want = items.iter().find(|(n, _)| n == "large_odd").unwrap();
    assert_eq!(Some(&t), want.1.as_tensor());
    assert_eq!(whole.len(), items.len());
    assert_eq!(whole[0].1, items[0].1);
}

#[test]
fn every_option_combination_round_trips() {
    let items = content();
    let kv = every_kv();
    let variants = [
        WriteOptions {
            sorted_index: true,
            ..WriteOptions::default()
        },
        WriteOptions {
            index_crc: false,
            ..WriteOptions::default()
        },
        WriteOptions {
            data_buffer_alignment: 8192,
            ..WriteOptions::default()
        },
        WriteOptions {
            data_buffer_alignment: 2 << 20,
            sorted_index: true,
            ..WriteOptions::default()
        },
        WriteOptions {
            tensor_count_hint: Some(items.iter().map(|(_, i)| i.tensor_count() as u64).sum()),
            ..WriteOptions::default()
        },
        WriteOptions::reference_compatible(),
        WriteOptions {
            tensor_count_hint: Some(items.iter().map(|(_, i)| i.tensor_count() as u64).sum()),
            ..WriteOptions::reference_compatible()
        },
    ];
    for opts in variants {
        let bytes = write_to_vec(opts, &items, &kv);
        let r = FileReader::from_bytes(&bytes).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
        check_reader(&r, &items, &kv);
        let info = r.info();
        assert_eq!(info.sorted_index(), opts.sorted_index);
        assert_eq!(info.data_buffer_alignment(), opts.data_buffer_alignment);
        assert_eq!(info.tensor_count_hint(), opts.tensor_count_hint);
        assert_eq!(
            info.flags() & flags::HAS_KV_METADATA != 0,
            !opts.reference_compat,
            "KV added first sets the flag unless reference-compatible"
        );
        if opts.index_crc {
            assert!(matches!(info.crc, CrcStatus::Verified(_)));
        } else {
            assert_eq!(info.crc, CrcStatus::Absent);
            assert_eq!(info.trailer.index_crc32c, 0);
        }
        if opts.sorted_index {
            let names: Vec<&str> = r.names().collect();
            let mut sorted = names.clone();
            sorted.sort();
            assert_eq!(names, sorted);
        }
        check_sequential(&bytes, &items, &kv);
    }
}

#[test]
fn composite_heads_are_placed_per_the_chosen_reading() {
    let c = partition();
    for (opts, padded) in [
        (WriteOptions::default(), false),
        (WriteOptions::reference_compatible(), true),
    ] {
        let mut w = FileWriterTo::new(Vec::new(), opts).unwrap();
        w.write_composite("p", &c).unwrap();
        let bytes = w.finish().unwrap();
        let r = FileReader::from_bytes(&bytes).unwrap();
        let names: Vec<&str> = r.names().collect();
        assert_eq!(names, ["p", "p/0", "p/1"]);
        let head = r.entries().next().unwrap();
        let end = head.descriptor_offset + u64::from(head.descriptor_length);
        assert_eq!(head.data_length, 0);
        let member = r.entries().nth(1).unwrap();
        if padded {
            assert_eq!(head.data_offset, 4096);
            assert_eq!(member.descriptor_offset, 4096);
        } else {
            assert_eq!(head.data_offset, end, "A5: data_offset = end of descriptor");
            assert_eq!(member.descriptor_offset, end.div_ceil(8) * 8);
        }
        assert_eq!(r.item("p").unwrap(), Some(Item::Composite(c.clone())));
        let all = SequentialReader::new(&bytes[..])
            .unwrap()
            .read_all()
            .unwrap();
        assert_eq!(
            all.items,
            vec![("p".to_owned(), Item::Composite(c.clone()))]
        );
    }
}

#[test]
fn explicit_composite_names_and_member_lookup() {
    let c = nested();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    let names = ["whole", "left", "left_top", "left_bottom", "right"];
    w.write_composite_named(&names, &c).unwrap();
    let bytes = w.finish().unwrap();
    let r = FileReader::from_bytes(&bytes).unwrap();
    assert_eq!(r.names().collect::<Vec<_>>(), names);
    let Some(Item::Composite(left)) = r.item("left").unwrap() else {
        panic!("left is a composite")
    };
    assert_eq!(Item::Composite(left), c.members[0]);
    assert_eq!(r.item("right").unwrap().as_ref(), Some(&c.members[1]));
    assert_eq!(r.tensor("left_top").unwrap().as_ref(), {
        let Item::Composite(inner) = &c.members[0] else {
            unreachable!()
        };
        inner.members[0].as_tensor()
    });
}

#[test]
fn zero_tensor_files() {
    let bytes = write_to_vec(WriteOptions::default(), &[], &[]);
    assert_eq!(bytes.len(), 112, "64 + 8 + 40 (file-format.md §1)");
    let r = FileReader::from_bytes(&bytes).unwrap();
    assert!(r.is_empty());
    assert!(r.items().unwrap().is_empty());
    assert_eq!(r.info().kv_section(), None);
    let all = SequentialReader::new(&bytes[..])
        .unwrap()
        .read_all()
        .unwrap();
    assert!(all.items.is_empty());

    let kv = every_kv();
    let bytes = write_to_vec(WriteOptions::default(), &[], &kv);
    let r = FileReader::from_bytes(&bytes).unwrap();
    assert_eq!(r.kv().to_vec(), kv);
    assert_eq!(
        r.info().flags() & flags::HAS_KV_METADATA,
        flags::HAS_KV_METADATA
    );
    let all = SequentialReader::new(&bytes[..])
        .unwrap()
        .read_all()
        .unwrap();
    assert_eq!(all.kv, kv);
}

#[test]
fn empty_tensors_still_align_their_buffer() {
    let t = Tensor::from_dense(ElementType::Float32, &[0, 3], &[]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_tensor("e", &t).unwrap();
    w.write_tensor("f", &t).unwrap();
    let bytes = w.finish().unwrap();
    let r = FileReader::from_bytes(&bytes).unwrap();
    let e = r.entries().next().unwrap();
    assert_eq!((e.data_offset, e.data_length), (4096, 0), "A6");
    assert_eq!(r.entries().nth(1).unwrap().descriptor_offset, 4096);
    assert_eq!(r.tensor("f").unwrap().unwrap(), t);
}

#[test]
fn unfinished_or_failed_writers_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.hrry");
    let t = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).unwrap();
    {
        let mut w = FileWriter::create(&path, WriteOptions::default()).unwrap();
        w.write_tensor("a", &t).unwrap();
        // dropped without finish
    }
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // A failing finish (the count hint is not met) leaves nothing either.
    let mut w = FileWriter::create(
        &path,
        WriteOptions {
            tensor_count_hint: Some(2),
            ..WriteOptions::default()
        },
    )
    .unwrap();
    w.write_tensor("a", &t).unwrap();
    let e = w.finish().unwrap_err();
    assert_eq!(e.rule(), Some(FormatRule::TensorCountHint));
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // An existing destination survives an abandoned rewrite.
    std::fs::write(&path, b"previous").unwrap();
    {
        let mut w = FileWriter::create(&path, WriteOptions::default()).unwrap();
        w.write_tensor("a", &t).unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"previous");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A missing directory is an I/O error at create.
    let e = FileWriter::create(dir.path().join("no/such/dir.hrry"), WriteOptions::default());
    assert!(matches!(e, Err(hurray_io::Error::Io(_))));
}

#[test]
fn content_errors_write_nothing_and_leave_the_writer_usable() {
    let t = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_tensor("a", &t).unwrap();
    let at = w.offset();
    let rule = |r: hurray_io::Result<()>| r.unwrap_err().rule();
    assert_eq!(
        rule(w.write_tensor("a", &t)),
        Some(FormatRule::DuplicateName)
    );
    assert_eq!(rule(w.write_tensor("", &t)), Some(FormatRule::Utf8));
    let long = "x".repeat(65_536);
    assert_eq!(rule(w.write_tensor(&long, &t)), Some(FormatRule::Limit));
    // A head alone is refused: heads go with their members.
    let p = partition();
    assert_eq!(
        rule(w.write_tensor("h", &p.head)),
        Some(FormatRule::CompositeMember)
    );
    // A torn composite (member missing) is refused before any byte.
    let mut torn = partition();
    torn.members.pop();
    assert_eq!(
        rule(w.write_composite("t", &torn)),
        Some(FormatRule::TornComposite)
    );
    // An invalid partition (overlapping members).
    let mut bad = partition();
    bad.members[1] = bad.members[0].clone();
    assert_eq!(
        rule(w.write_composite("b", &bad)),
        Some(FormatRule::CompositeMember)
    );
    // Too deep.
    assert_eq!(
        rule(w.write_composite("deep", &deep_group(9))),
        Some(FormatRule::CompositeDepth)
    );
    // A composite whose member name collides with an existing tensor.
    assert_eq!(
        rule(w.write_composite_named(&["p", "a", "p1"], &p)),
        Some(FormatRule::DuplicateName)
    );
    assert_eq!(
        rule(w.write_composite_named(&["p", "p0"], &p)),
        Some(FormatRule::BufferMismatch)
    );
    w.add_kv("k", KvValue::Bool(true)).unwrap();
    assert_eq!(
        rule(w.add_kv("k", KvValue::Bool(false))),
        Some(FormatRule::DuplicateKey)
    );
    assert_eq!(
        rule(w.add_kv("", KvValue::Bool(false))),
        Some(FormatRule::Utf8)
    );
    assert_eq!(w.offset(), at, "nothing was written");
    w.write_composite("p", &p).unwrap();
    let bytes = w.finish().unwrap();
    let r = FileReader::from_bytes(&bytes).unwrap();
    assert_eq!(r.names().collect::<Vec<_>>(), ["a", "p", "p/0", "p/1"]);
    assert_eq!(r.kv_get("k").unwrap(), KvValue::Bool(true));
}

#[test]
fn io_errors_poison_the_writer() {
    struct Failing(usize);
    impl std::io::Write for Failing {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 < b.len() {
                return Err(std::io::Error::other("disk full"));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let t = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).unwrap();
    let mut w = FileWriterTo::new(Failing(100), WriteOptions::default()).unwrap();
    assert!(matches!(
        w.write_tensor("a", &t),
        Err(hurray_io::Error::Io(_))
    ));
    assert!(matches!(
        w.write_tensor("b", &t),
        Err(hurray_io::Error::Io(_))
    ));
    assert!(matches!(w.finish(), Err(hurray_io::Error::Io(_))));
}

#[test]
fn illegal_alignment_options_are_refused() {
    for a in [0, 2048, 4097, 4 << 20] {
        let e = FileWriterTo::new(
            Vec::new(),
            WriteOptions {
                data_buffer_alignment: a,
                ..WriteOptions::default()
            },
        )
        .err()
        .unwrap();
        assert_eq!(e.rule(), Some(FormatRule::DataAlignment));
    }
}

#[cfg(feature = "tokio")]
mod tokio_front_ends {
    use super::*;
    use hurray_io::file::{read_file_async, AsyncFileWriter, AsyncFileWriterTo, ReadOptions};

    #[tokio::test]
    async fn async_path_writer_round_trips_through_every_reader() {
        let items = content();
        let kv = every_kv();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("async.hrry");
        let mut w = AsyncFileWriter::create(&path, WriteOptions::default())
            .await
            .unwrap();
        for e in &kv {
            w.add_kv(e.key.clone(), e.value.clone()).unwrap();
        }
        for (n, item) in &items {
            match item {
                Item::Tensor(t) => w.write_tensor(n, t).await.unwrap(),
                Item::Composite(c) => w.write_composite(n, c).await.unwrap(),
            }
        }
        w.finish().await.unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let r = read_file_async(&path, &ReadOptions::default())
            .await
            .unwrap();
        check_reader(&r, &items, &kv);
        check_reader(&FileReader::open(&path).unwrap(), &items, &kv);
        let bytes = std::fs::read(&path).unwrap();
        check_sequential(&bytes, &items, &kv);
        // Same bytes as the blocking in-memory writer.
        assert!(bytes == write_to_vec(WriteOptions::default(), &items, &kv));
    }

    #[tokio::test]
    async fn async_writer_to_any_sink_and_drop_cleanup() {
        let items = content();
        let mut w =
            AsyncFileWriterTo::new(Vec::new(), WriteOptions::reference_compatible()).unwrap();
        for (n, item) in &items {
            match item {
                Item::Tensor(t) => w.write_tensor(n, t).await.unwrap(),
                Item::Composite(c) => w.write_composite(n, c).await.unwrap(),
            }
        }
        let bytes = w.finish().await.unwrap();
        assert!(bytes == write_to_vec(WriteOptions::reference_compatible(), &items, &[]));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dropped.hrry");
        {
            let mut w = AsyncFileWriter::create(&path, WriteOptions::default())
                .await
                .unwrap();
            w.write_tensor("x", items[0].1.as_tensor().unwrap())
                .await
                .unwrap();
        }
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[cfg(feature = "tokio")]
mod cancellation {
    use super::*;
    use hurray_io::file::{AsyncFileWriter, AsyncFileWriterTo};
    use std::future::Future;
    use std::pin::{pin, Pin};
    use std::task::{Context, Poll, Waker};

    /// Accepts `accept` bytes, then answers `Pending` once, then accepts everything.
    struct StallOnce {
        data: Vec<u8>,
        accept: usize,
        stalled: bool,
    }

    impl tokio::io::AsyncWrite for StallOnce {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            let this = &mut *self;
            if !this.stalled {
                let room = this.accept - this.data.len();
                if room == 0 {
                    this.stalled = true;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let n = room.min(buf.len());
                this.data.extend_from_slice(&buf[..n]);
                return Poll::Ready(Ok(n));
            }
            this.data.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Polls `f` once and drops it (what `select!` or a timeout does to a loser).
    fn poll_once_and_drop<F: Future>(f: F) -> bool {
        let f = pin!(f);
        f.poll(&mut Context::from_waker(Waker::noop())).is_pending()
    }

    fn is_poisoned_error(r: hurray_io::Result<impl Sized>) -> bool {
        matches!(r, Err(hurray_io::Error::Io(e)) if e.to_string().contains("abandoned"))
    }

    #[tokio::test]
    async fn a_dropped_write_future_poisons_the_async_writer() {
        let t = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).unwrap();
        // Inside the header, the descriptor, the padding, the buffer.
        for accept in [0, 70, 4000, 4097] {
            let sink = StallOnce {
                data: Vec::new(),
                accept,
                stalled: false,
            };
            let mut w = AsyncFileWriterTo::new(sink, WriteOptions::default()).unwrap();
            assert!(poll_once_and_drop(w.write_tensor("a", &t)));
            assert!(is_poisoned_error(w.write_tensor("b", &t).await));
            assert!(is_poisoned_error(
                w.write_composite("p", &partition()).await
            ));
            assert!(is_poisoned_error(w.add_kv("k", KvValue::Bool(true))));
            assert!(is_poisoned_error(w.finish().await));
        }
    }

    #[tokio::test]
    async fn a_dropped_write_future_leaves_no_file_at_the_destination() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cancelled.hrry");
        let opts = WriteOptions {
            durable: false,
            ..WriteOptions::default()
        };
        let mut w = AsyncFileWriter::create(&path, opts).await.unwrap();
        let small = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).unwrap();
        w.write_tensor("small", &small).await.unwrap();
        // 32 MiB cannot reach a tokio file in one poll: the file's writes go through
        // blocking tasks, at most 2 MiB each, and the next one waits for the last.
        let big = vec![7u8; 32 << 20];
        let big = Tensor::from_dense(ElementType::Uint8, &[big.len() as u64], &big).unwrap();
        assert!(poll_once_and_drop(w.write_tensor("big", &big)));
        assert!(is_poisoned_error(w.write_tensor("after", &small).await));
        assert!(is_poisoned_error(w.finish().await));
        assert!(!path.exists(), "nothing renamed into place");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "the temporary file is removed"
        );
    }

    /// A `finish` future dropped at any point leaves the destination either absent
    /// (dropped before the rename started) or holding the complete new file (the
    /// rename then finishes on its blocking thread), and never a temporary file.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_finish_is_all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let t = Tensor::from_dense(ElementType::Float32, &[1000], &[3u8; 4000]).unwrap();
        let (mut absent, mut complete) = (0, 0);
        for k in 0..40u32 {
            let path = dir.path().join(format!("f{k}.hrry"));
            let opts = WriteOptions {
                durable: k % 2 == 0,
                ..WriteOptions::default()
            };
            let mut w = AsyncFileWriter::create(&path, opts).await.unwrap();
            w.write_tensor("a", &t).await.unwrap();
            let mut f = Box::pin(w.finish());
            let mut cx = Context::from_waker(Waker::noop());
            // Poll a varying number of times, giving the blocking threads a varying
            // time between polls, then drop.
            for _ in 0..k / 2 {
                if f.as_mut().poll(&mut cx).is_ready() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_micros(20 * u64::from(k % 9)));
            }
            drop(f);
            // Let a rename already handed to a blocking thread finish.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            let leftovers = loop {
                let temps: Vec<_> = std::fs::read_dir(dir.path())
                    .unwrap()
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".hrry-tmp"))
                    .collect();
                if temps.is_empty() || std::time::Instant::now() > deadline {
                    break temps.len();
                }
                tokio::task::yield_now().await;
                std::thread::sleep(std::time::Duration::from_millis(2));
            };
            assert_eq!(leftovers, 0, "round {k}: a temporary file was left behind");
            if path.exists() {
                let r = FileReader::open(&path).unwrap();
                assert_eq!(r.tensor("a").unwrap().unwrap(), t, "round {k}");
                complete += 1;
            } else {
                absent += 1;
            }
        }
        println!("dropped finish: {absent} left nothing, {complete} completed the file");
        assert!(
            absent > 0,
            "dropping before the first poll must leave nothing"
        );
    }
}
