//! The CLI's safetensors reader (`hurray-cli/src/st`, `convert/from_st.rs`): the
//! input is a `.safetensors` file, converted with `hurray convert` to an HRRYFILE.
//! Checks ([`hurray_fuzz::convert_and_check`]): a failed conversion leaves no output;
//! a successful one opens, counts the tensors its summary reports, every buffer
//! reads, `hurray validate` accepts it, and it survives a safetensors round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hurray_fuzz::convert_and_check(data, "in.safetensors");
});
