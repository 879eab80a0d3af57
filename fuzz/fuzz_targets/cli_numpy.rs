//! The CLI's NumPy readers (`hurray-cli/src/npy.rs`, `convert/from_npy.rs`): the
//! input is a `.npy` array, or a `.npz` archive when it starts like a zip file,
//! converted with `hurray convert` to an HRRYFILE. Checks as for `cli_safetensors`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let name = if data.starts_with(b"PK") {
        "in.npz"
    } else {
        "in.npy"
    };
    hurray_fuzz::convert_and_check(data, name);
});
