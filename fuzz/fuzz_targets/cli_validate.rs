//! The CLI's commands over untrusted Hurray files (`hurray-cli/src/validate.rs`,
//! `container.rs`, `inspect/`, `dump.rs`): the input is an HRRYFILE when it starts
//! with `HRRYFILE`, else a stream (`.hrrys`). Runs `hurray validate`, then opens it
//! as `hurray inspect` does, renders the inspect table and dumps a few values of up
//! to four tensors. Checks: a file `validate` accepts opens for `inspect`.
#![no_main]

use hurray_cli::container::Container;
use hurray_cli::{dump, inspect};
use hurray_fuzz::scratch_dir;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let name = if data.starts_with(b"HRRYFILE") {
        "in.hrry"
    } else {
        "in.hrrys"
    };
    let path = scratch_dir().join(name);
    std::fs::write(&path, data).expect("write the scratch file");
    let valid = hurray_cli::validate::validate(&path);
    let opened = Container::open(&path);
    if let (Ok(_), Err(e)) = (&valid, &opened) {
        panic!("validate accepts a file inspect cannot open: {e}");
    }
    let Ok(c) = opened else { return };
    let report = inspect::report(&c, data.len() as u64);
    let mut out = Vec::new();
    inspect::table::render(&report, name, &mut out).expect("rendering into memory cannot fail");
    std::hint::black_box(out);
    let names: Vec<String> = match &c {
        Container::File(r) => r.names().take(4).map(str::to_owned).collect(),
        Container::Stream { tensors, .. } => {
            tensors.iter().take(4).map(|t| t.name.clone()).collect()
        }
    };
    drop(c);
    for n in names {
        // Dumping refuses some types and layouts; it must not panic on any.
        if let Ok(t) = dump::find(&path, &n) {
            let _ = std::hint::black_box(dump::render(&n, &t, 8));
        }
    }
});
