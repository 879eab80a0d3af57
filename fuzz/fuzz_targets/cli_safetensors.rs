//! The CLI's safetensors reader (`hurray-cli/src/st`, `convert/from_st.rs`): the
//! input is a `.safetensors` file, converted with `hurray convert` to an HRRYFILE.
//! Checks: no panic; a failed conversion leaves no output; a successful one opens,
//! counts the tensors its summary reports, and every buffer reads.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hurray_fuzz::convert_and_check(data, "in.safetensors");
});
