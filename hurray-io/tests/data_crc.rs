//! The optional per-tensor data CRC-32C (`hurray_io::file::data_crc`): recorded in the
//! reserved KV entry on request, verified, and a flipped data byte is named by tensor.

use hurray_core::ElementType;
use hurray_io::file::data_crc::{self, DataCrc, DATA_CRC32C_KEY};
use hurray_io::file::{FileReader, FileWriterTo, KvArray, KvValue, WriteOptions};
use hurray_io::{FormatRule, Tensor};

fn file(with_crc: bool) -> Vec<u8> {
    let a = Tensor::from_dense(ElementType::Uint8, &[5], &[1, 2, 3, 4, 5]).unwrap();
    let b = Tensor::from_dense(ElementType::Float32, &[2], &[0, 0, 128, 63, 0, 0, 0, 64]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    if with_crc {
        w = w.with_data_crc32c();
    }
    w.write_tensor("a", &a).unwrap();
    w.write_tensor("b", &b).unwrap();
    w.finish().unwrap()
}

#[test]
fn recorded_values_are_the_crc32c_of_each_tensor_in_file_order() {
    let r = FileReader::from_bytes(&file(true)).unwrap();
    let Some(KvValue::Array(KvArray::UInt64(v))) = r.kv_get(DATA_CRC32C_KEY).map(|v| v.to_owned())
    else {
        panic!("no CRC entry");
    };
    assert_eq!(
        v,
        vec![
            u64::from(crc32c::crc32c(&[1, 2, 3, 4, 5])),
            u64::from(crc32c::crc32c(&[0, 0, 128, 63, 0, 0, 0, 64]))
        ]
    );
    assert_eq!(data_crc::verify(&r).unwrap(), DataCrc::Verified(2));
}

#[test]
fn a_flipped_data_byte_names_the_tensor() {
    let mut bytes = file(true);
    let r = FileReader::from_bytes(&bytes).unwrap();
    let at = r.catalog().buffer_ranges(1).unwrap()[0].start as usize + 5;
    bytes[at] ^= 0x10;
    let r = FileReader::from_bytes(&bytes).unwrap();
    let e = data_crc::verify(&r).unwrap_err();
    assert_eq!(e.rule(), Some(FormatRule::DataCrcMismatch));
    let text = e.to_string();
    assert!(text.contains("tensor \"b\""), "{text}");
    assert!(text.contains(&format!("at byte {}", at - 5)), "{text}");
}

#[test]
fn without_the_entry_data_cannot_be_checked_and_bytes_stay_default() {
    let plain = file(false);
    let r = FileReader::from_bytes(&plain).unwrap();
    assert_eq!(data_crc::verify(&r).unwrap(), DataCrc::Absent);
    assert!(r.kv_get(DATA_CRC32C_KEY).is_none());
    // Off by default: the same tensors written twice give the same bytes.
    assert_eq!(plain, file(false));
}

#[test]
fn a_malformed_entry_is_an_error_of_its_own_rule() {
    // Writers refuse the reserved key (below), so craft the entry under a look-alike
    // key and patch its last byte: the KV section carries no CRC.
    let t = Tensor::from_dense(ElementType::Uint8, &[1], &[7]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_tensor("t", &t).unwrap();
    let look_alike = format!("{}X", &DATA_CRC32C_KEY[..DATA_CRC32C_KEY.len() - 1]);
    w.add_kv(look_alike.as_str(), KvValue::UInt64(3)).unwrap();
    let mut bytes = w.finish().unwrap();
    let at = bytes
        .windows(look_alike.len())
        .position(|win| win == look_alike.as_bytes())
        .unwrap();
    *bytes.get_mut(at + look_alike.len() - 1).unwrap() =
        *DATA_CRC32C_KEY.as_bytes().last().unwrap();
    let r = FileReader::from_bytes(&bytes).unwrap();
    let e = data_crc::verify(&r).unwrap_err();
    assert_eq!(e.rule(), Some(FormatRule::DataCrcEntry));
    assert!(e.to_string().contains("is not an array of uint64"), "{e}");
}

#[test]
fn writers_refuse_the_reserved_key_when_it_is_added() {
    let t = Tensor::from_dense(ElementType::Uint8, &[1], &[7]).unwrap();
    for crc in [false, true] {
        let opts = WriteOptions::default();
        let mut w = FileWriterTo::new(Vec::new(), opts).unwrap();
        if crc {
            w = w.with_data_crc32c();
        }
        w.write_tensor("t", &t).unwrap();
        let e = w
            .add_kv(
                DATA_CRC32C_KEY,
                KvValue::Array(hurray_io::file::KvArray::UInt64(vec![1])),
            )
            .unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::ReservedKey));
        assert!(e.to_string().contains("reserved"), "{e}");
        // The refusal loses nothing: the writer goes on and finishes a valid file.
        w.add_kv("user", KvValue::UInt64(1)).unwrap();
        let bytes = w.finish().unwrap();
        let r = FileReader::from_bytes(&bytes).unwrap();
        assert!(r.kv_get("user").is_some());
        assert_eq!(r.kv_get(DATA_CRC32C_KEY).is_some(), crc);
        if crc {
            assert_eq!(
                data_crc::verify(&r).unwrap(),
                data_crc::DataCrc::Verified(1)
            );
        }
    }
}
