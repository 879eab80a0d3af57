//! The HRRYFILE readers (`file-format.md`): the random-access [`FileReader`] over
//! the input bytes, in memory and memory-mapped from a scratch file (header, tensor
//! region, KV, index, trailer and CRC), with every name, KV entry, descriptor, tensor
//! and item it offers and every buffer read; the non-seeking [`SequentialReader`]
//! over the same bytes arriving a few at a time. Checks: the mapped and in-memory
//! readers agree (same items, or the same error); the sequential reader accepts no
//! file the random-access reader refuses, and when both accept a file they agree on
//! its items and KV; a file
//! accepted strictly is accepted permissively with the same items; an accepted file
//! rewritten with [`FileWriterTo`] reads back with the same items and KV.
#![no_main]

use hurray_core::DecodeOptions;
use hurray_fuzz::{same_items, same_kv, scratch_dir, touch, Trickle};
use hurray_io::file::{FileReader, FileWriterTo, ReadOptions, SequentialReader, WriteOptions};
use hurray_io::Item;
use libfuzzer_sys::fuzz_target;

fn read_everything(r: &FileReader) -> Option<Vec<(String, Item)>> {
    let names: Vec<String> = r.names().map(str::to_owned).collect();
    assert_eq!(names.len(), r.len());
    assert_eq!(r.entries().len(), r.len());
    for e in r.kv() {
        assert!(r.kv_get(&e.key).is_some(), "kv_get finds every key");
    }
    // A tensor whose buffer bytes break a content rule (a sparse index, a scale) is
    // refused on lookup, with a content error and nothing else; every item holding
    // it, and `items()`, fail the same way.
    let content = |e: &hurray_io::Error| {
        assert!(matches!(e, hurray_io::Error::Content { .. }), "{e}");
    };
    let mut bad_content = false;
    for name in &names {
        assert!(
            r.descriptor(name).is_some(),
            "every indexed name has a descriptor"
        );
        match r.tensor(name) {
            Ok(t) => {
                touch(&Item::Tensor(t.expect("every indexed name has a tensor")));
            }
            Err(e) => {
                content(&e);
                bad_content = true;
            }
        }
        match r.item(name) {
            Ok(item) => {
                touch(&item.expect("every indexed name has an item"));
            }
            Err(e) => {
                content(&e);
                bad_content = true;
            }
        }
    }
    for (_, t) in r.tensors() {
        match t {
            Ok(t) => {
                touch(&Item::Tensor(t));
            }
            Err(e) => content(&e),
        }
    }
    match r.items() {
        Ok(items) => {
            assert!(
                !bad_content,
                "items() succeeded though a lookup failed its content check"
            );
            for (_, item) in &items {
                touch(item);
            }
            Some(items)
        }
        Err(e) => {
            content(&e);
            assert!(
                bad_content,
                "items() failed its content check but every lookup passed"
            );
            None
        }
    }
}

/// The same content written again: top-level items named by position, KV as read.
fn rewrite(r: &FileReader, items: &[(String, Item)]) -> Vec<u8> {
    let opts = WriteOptions {
        data_buffer_alignment: r.info().header.data_buffer_alignment,
        ..WriteOptions::default()
    };
    let mut w = FileWriterTo::new(Vec::new(), opts).expect("the file's own alignment is legal");
    for e in r.kv() {
        w.add_kv(e.key, e.value.to_owned())
            .expect("KV a reader accepted is written");
    }
    for (i, (_, item)) in items.iter().enumerate() {
        let name = i.to_string();
        match item {
            Item::Tensor(t) => w.write_tensor(&name, t),
            Item::Composite(c) => w.write_composite(&name, c),
        }
        .expect("an item a reader accepted is written");
    }
    w.finish().expect("the rewritten file finishes")
}

fuzz_target!(|data: &[u8]| {
    let random = FileReader::from_bytes(data);
    let sequential = SequentialReader::new(Trickle::new(data)).and_then(SequentialReader::read_all);
    if let Ok(s) = &sequential {
        for (_, item) in &s.items {
            touch(item);
        }
    }
    // The same bytes through the memory-mapped reader (the `unsafe` mapping code).
    let path = scratch_dir().join("in.hrry");
    std::fs::write(&path, data).expect("write the scratch file");
    let mapped = FileReader::open(&path);
    match (&random, &mapped) {
        (Ok(a), Ok(b)) => match (a.items(), b.items()) {
            (Ok(a), Ok(b)) => assert!(
                same_items(a.iter().map(|(_, i)| i), b.iter().map(|(_, i)| i)),
                "mapped and in-memory readers disagree"
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "different errors"),
            (a, b) => panic!(
                "in-memory items: {:?}; mapped items: {:?}",
                a.err(),
                b.err()
            ),
        },
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "different errors"),
        (a, b) => panic!(
            "in-memory reader: {:?}; mapped reader: {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
    drop(mapped);
    // The sequential reader checks everything the random-access one does, and
    // more (it cannot skip non-zero padding, and trusts tensor_count_hint, which
    // the random-access reader treats as advisory): it never accepts a file the
    // random-access reader refuses.
    if let (Err(e), Ok(_)) = (&random, &sequential) {
        panic!("the sequential reader accepts a file the random-access reader refuses: {e}");
    }
    let Ok(r) = random else { return };
    let Some(items) = read_everything(&r) else {
        // Bad buffer contents: the sequential reader checks them too.
        assert!(
            sequential.is_err(),
            "the sequential reader accepts contents the random-access reader refuses"
        );
        return;
    };
    if let Ok(s) = &sequential {
        assert_eq!(
            s.items.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            items.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "the two readers disagree on the names"
        );
        assert!(
            same_items(s.items.iter().map(|(_, i)| i), items.iter().map(|(_, i)| i)),
            "the two readers disagree on the items"
        );
        assert!(
            same_kv(&s.kv, &r.kv().to_vec()),
            "the two readers disagree on the KV"
        );
    }
    let permissive = ReadOptions {
        decode: DecodeOptions::permissive(),
        ..ReadOptions::default()
    };
    let p = FileReader::from_bytes_with(data, &permissive)
        .expect("permissive reading accepts what strict reading accepts");
    let p = p
        .items()
        .expect("permissive reading does not check contents");
    assert!(
        same_items(p.iter().map(|(_, i)| i), items.iter().map(|(_, i)| i)),
        "permissive reading differs"
    );

    let bytes = rewrite(&r, &items);
    let again = FileReader::from_bytes(&bytes).expect("the rewritten file reads");
    let back = again
        .items()
        .expect("rewritten contents passed the writer's checks");
    assert!(
        same_items(back.iter().map(|(_, i)| i), items.iter().map(|(_, i)| i)),
        "rewriting changed the items"
    );
    assert!(
        same_kv(&again.kv().to_vec(), &r.kv().to_vec()),
        "rewriting changed the KV"
    );
});
