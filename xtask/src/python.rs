//! The Python binding (`bindings/python`): a project-local virtual environment
//! under `target/py-venv`, the extension built into it with maturin, the pytest
//! suite, and the wheel `cargo xtask dist` produces, installed into a fresh venv.
//!
//! Every stage skips itself with a note when no `python3` (3.10 or newer) is found.
//! `HURRAY_PYTHON` names another interpreter.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::test::Outcome;
use crate::util::{display, exec, workspace_root, Result};

/// What the development venv needs; `scipy` is optional for the suite but cheap.
/// `ml_dtypes` (bfloat16/float8/sub-byte NumPy dtypes), `jax` (CPU; a bfloat16
/// DLPack producer for `from_dlpack`) and `safetensors` (the peer of the save
/// benchmark) serve issue 14's tests and benchmarks; the suite skips what is missing.
const REQUIREMENTS: &[&str] = &[
    "numpy",
    "pytest",
    "maturin>=1.5,<2",
    "scipy",
    "ml_dtypes",
    "jax",
    "safetensors",
];

/// The binding's directory.
pub fn binding_dir() -> PathBuf {
    workspace_root().join("bindings/python")
}

fn venv_dir() -> PathBuf {
    workspace_root().join("target/py-venv")
}

fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin/python")
}

/// The base interpreter (`$HURRAY_PYTHON` or `python3`), if it is CPython >= 3.10.
fn base_python() -> Option<String> {
    let py = std::env::var("HURRAY_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&py)
        .args([
            "-c",
            "import sys, venv; sys.exit(0 if sys.version_info >= (3, 10) else 1)",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(py)
}

fn run(cmd: &mut Command) -> Result {
    let line = display(cmd);
    exec(cmd).map_err(|e| format!("`{line}`: {e}").into())
}

/// Creates (once) the development venv with [`REQUIREMENTS`]; returns its python.
fn ensure_venv(base: &str) -> Result<PathBuf> {
    let venv = venv_dir();
    let py = venv_python(&venv);
    let stamp = venv.join("hurray-requirements.txt");
    let wanted = REQUIREMENTS.join("\n");
    if py.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(py);
    }
    if !py.exists() {
        run(Command::new(base).args(["-m", "venv"]).arg(&venv))?;
    }
    run(Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(REQUIREMENTS))?;
    std::fs::write(&stamp, wanted)?;
    Ok(py)
}

fn maturin(py: &Path) -> Command {
    let mut cmd = Command::new(py);
    cmd.args(["-m", "maturin"]).current_dir(binding_dir());
    cmd
}

/// Builds the extension in release mode and installs it (editable) into the venv.
fn develop(py: &Path) -> Result {
    let venv = py.parent().and_then(Path::parent).expect("venv/bin/python");
    run(maturin(py)
        .args(["develop", "--release", "--quiet"])
        .env("VIRTUAL_ENV", venv))
}

/// The development venv's python with the extension freshly built into it
/// (`maturin develop --release`, once per xtask process), or `None` when no python3
/// >= 3.10 is found. Used by the pytest stage, the matrix, the demo and the benchmarks.
pub fn dev_python() -> Result<Option<PathBuf>> {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(py) = BUILT.get() {
        return Ok(Some(py.clone()));
    }
    let Some(base) = base_python() else {
        return Ok(None);
    };
    let py = ensure_venv(&base)?;
    develop(&py)?;
    Ok(Some(BUILT.get_or_init(|| py).clone()))
}

/// Stage: build the extension into `target/py-venv` and run the pytest suite.
pub fn test_stage() -> Result<Outcome> {
    let Some(py) = dev_python()? else {
        return Ok(Outcome::Skipped(
            "no python3 >= 3.10 with venv found (set HURRAY_PYTHON to use another)".into(),
        ));
    };
    run(Command::new(&py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(binding_dir())
        .env("HURRAY_REPO_ROOT", workspace_root())
        // The server of tests/test_net.py.
        .env("HURRAY_BIN", crate::util::hurray_cli()?))?;
    Ok(Outcome::Passed)
}

/// What the scale-out stage adds to the development venv (issue 19): Dask with
/// `distributed` (same release) and Ray, pinned so a CI run measures the versions
/// docs/scale-out.md was written against. Only that stage installs them.
const SCALEOUT_REQUIREMENTS: &[&str] = &[
    "dask[array]==2026.8.0",
    "distributed==2026.8.0",
    "ray==2.60.0",
    "psutil",
];

/// Installs [`SCALEOUT_REQUIREMENTS`] into the development venv (once: a stamp
/// file records them). `Err` carries pip's failure.
fn ensure_scaleout(py: &Path) -> Result {
    let venv = py.parent().and_then(Path::parent).expect("venv/bin/python");
    let stamp = venv.join("hurray-scaleout-requirements.txt");
    let wanted = SCALEOUT_REQUIREMENTS.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(());
    }
    run(Command::new(py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(SCALEOUT_REQUIREMENTS))?;
    std::fs::write(&stamp, wanted)?;
    Ok(())
}

/// Stage: Dask `distributed.LocalCluster` (two worker processes) and a local Ray
/// (`num_cpus=2`), installed into the development venv by this stage, run
/// `bindings/python/tests_scaleout` (issue 19). Skipped (a failure under CI) when
/// no python3 is found or the packages cannot be installed (no network).
pub fn scaleout_stage() -> Result<Outcome> {
    let Some(py) = dev_python()? else {
        return Ok(Outcome::Skipped(
            "no python3 >= 3.10 with venv found (set HURRAY_PYTHON to use another)".into(),
        ));
    };
    if let Err(e) = ensure_scaleout(&py) {
        return Ok(Outcome::Skipped(format!(
            "could not install {} into target/py-venv: {e}",
            SCALEOUT_REQUIREMENTS.join(" ")
        )));
    }
    run(Command::new(&py)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests_scaleout",
        ])
        .current_dir(binding_dir())
        .env("HURRAY_REPO_ROOT", workspace_root())
        .env("RAY_USAGE_STATS_ENABLED", "0"))?;
    Ok(Outcome::Passed)
}

/// The distribution name on the Python package index (`hurray` there is an
/// unrelated project); the import name stays `hurray`.
pub const DISTRIBUTION: &str = "hurray-tensors";

/// The manylinux policy the wheel is built for: glibc 2.17, reached by linking
/// with zig (`maturin zig cc`, the `ziglang` package) against that glibc's symbols.
pub const MANYLINUX: &str = "manylinux2014";

/// What the release build adds to the development venv: zig for the manylinux
/// link, auditwheel to check the wheel.
const DIST_REQUIREMENTS: &[&str] = &["ziglang", "auditwheel"];

/// The development venv with [`DIST_REQUIREMENTS`] installed too; returns its python.
pub fn dist_venv() -> Result<PathBuf> {
    let base = base_python().ok_or("no python3 >= 3.10 found (set HURRAY_PYTHON)")?;
    let py = ensure_venv(&base)?;
    let have = Command::new(&py)
        .args(["-c", "import ziglang, auditwheel"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        run(Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(DIST_REQUIREMENTS))?;
    }
    Ok(py)
}

/// Removes the files in `target/dist` whose name ends with `suffix`.
fn clear(out: &Path, suffix: &str) -> Result {
    if out.is_dir() {
        for e in std::fs::read_dir(out)? {
            let p = e?.path();
            if p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(suffix))
            {
                std::fs::remove_file(p)?;
            }
        }
    }
    Ok(())
}

/// The one file in `out` whose name ends with `suffix`.
fn the_file(out: &Path, suffix: &str) -> Result<PathBuf> {
    std::fs::read_dir(out)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(suffix))
        })
        .ok_or_else(|| format!("maturin wrote no *{suffix} into {}", out.display()).into())
}

/// Builds the abi3 wheel for [`MANYLINUX`] into `target/dist`, linked for glibc 2.17
/// with zig as the Java and Node natives are ([`crate::dist::zig_env`]; maturin
/// then checks the symbols against the policy), checks it with `auditwheel show`
/// (which must name the same policy), and returns its path.
pub fn build_wheel() -> Result<PathBuf> {
    let py = dist_venv()?;
    let out = workspace_root().join("target/dist");
    clear(&out, ".whl")?;
    let mut cmd = maturin(&py);
    cmd.args([
        "build",
        "--release",
        "--quiet",
        "--target",
        crate::dist::ZIG_TRIPLE,
    ])
    .args(["--compatibility", MANYLINUX, "--out"])
    .arg(&out);
    crate::dist::zig_env(&mut cmd, "zig-python")?;
    run(&mut cmd)?;
    let wheel = the_file(&out, ".whl")?;
    let name = wheel.file_name().unwrap_or_default().to_string_lossy();
    if !name.starts_with("hurray_tensors-") || !name.contains("manylinux_2_17") {
        return Err(
            format!("unexpected wheel name {name}: want hurray_tensors-*-manylinux_2_17*").into(),
        );
    }
    let show = Command::new(&py)
        .args(["-m", "auditwheel", "show"])
        .arg(&wheel)
        .output()
        .map_err(|e| format!("auditwheel show: {e}"))?;
    let text = String::from_utf8_lossy(&show.stdout).replace('\n', " ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if !show.status.success() || !text.contains("manylinux_2_17_x86_64") {
        return Err(format!(
            "auditwheel show {name} does not confirm manylinux_2_17 ({}): {text}{}",
            show.status,
            String::from_utf8_lossy(&show.stderr)
        )
        .into());
    }
    println!("dist: auditwheel show: {text}");
    Ok(wheel)
}

/// Builds the sdist (`maturin sdist`) into `target/dist` and returns its path.
pub fn build_sdist() -> Result<PathBuf> {
    let py = dist_venv()?;
    let out = workspace_root().join("target/dist");
    clear(&out, ".tar.gz")?;
    run(maturin(&py).args(["sdist", "--out"]).arg(&out))?;
    let sdist = the_file(&out, ".tar.gz")?;
    let name = sdist.file_name().unwrap_or_default().to_string_lossy();
    if !name.starts_with(&format!("{}-", DISTRIBUTION.replace('-', "_"))) {
        return Err(format!("unexpected sdist name {name}").into());
    }
    Ok(sdist)
}

/// The install check's program (`IN OUT`, [`crate::smoke`]), run in the fresh venv.
const SMOKE: &str = "import hurray, pathlib, sys, tempfile\n\
                     assert hurray.__version__, 'no version'\n\
                     t = hurray.arange(6, dtype=hurray.int32)\n\
                     p = pathlib.Path(tempfile.mkdtemp()) / 'w.hrry'\n\
                     hurray.save(str(p), {'t': t})\n\
                     u = hurray.load(str(p))['t']\n\
                     assert u.shape == (6,) and u.dtype == hurray.int32\n\
                     w = hurray.StreamWriter(); w.write(t); w.finish()\n\
                     (v,) = list(hurray.StreamReader(w.getvalue()))\n\
                     assert v.shape == (6,) and v._buffer_bytes(0) == t._buffer_bytes(0)\n\
                     assert 'site-packages' in hurray.__file__, hurray.__file__\n\
                     assert pathlib.Path(hurray.__file__).parent.joinpath('py.typed').exists()\n\
                     weights = hurray.load(sys.argv[1])['weights']\n\
                     assert weights.shape == (2, 2), weights.shape\n\
                     import array\n\
                     a = array.array('f', weights._buffer_bytes(0))\n\
                     b = array.array('f', [x + i + 1 for i, x in enumerate(a)])\n\
                     out = hurray.Tensor(b.tobytes(), hurray.float32, (2, 2))\n\
                     hurray.save(sys.argv[2], {'weights': out})\n\
                     from importlib.metadata import files, version\n\
                     lic = {f.name for f in files('hurray-tensors') if 'licenses' in str(f)}\n\
                     assert {'LICENSE-MIT', 'LICENSE-APACHE'} <= lic, lic\n\
                     print('python: ok, import hurray', hurray.__version__, 'from', \
                     'hurray-tensors', version('hurray-tensors'), hurray.__file__)\n";

/// Stage: the wheel of `cargo xtask dist` installs into a fresh venv outside the
/// repository (`--no-index`: it has no dependencies, nothing comes from the network;
/// an empty pip cache) and its program reads a file another language wrote and
/// writes one Rust reads back ([`crate::smoke`]). The sdist is built too.
pub fn wheel_stage() -> Result<Outcome> {
    let Some(base) = base_python() else {
        return Ok(Outcome::Skipped(
            "no python3 >= 3.10 with venv found".into(),
        ));
    };
    let wheel = build_wheel()?;
    build_sdist()?;
    let input = crate::smoke::input()?;
    // A fresh project outside the repository, so nothing of the checkout is importable.
    let fresh = crate::smoke::fresh_dir("wheel-check")?;
    let venv = fresh.join("venv");
    run(Command::new(&base).args(["-m", "venv"]).arg(&venv))?;
    let py = venv_python(&venv);
    run(Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .env("PIP_CACHE_DIR", fresh.join("pip-cache"))
        .arg(&wheel))?;
    let out = fresh.join("from-python.hrry");
    run(Command::new(&py)
        .args(["-c", SMOKE])
        .arg(&input)
        .arg(&out)
        .current_dir(&fresh))?;
    crate::smoke::verify("python", &input, &out)?;
    std::fs::remove_dir_all(&fresh)?;
    Ok(Outcome::Passed)
}
