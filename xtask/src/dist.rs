//! `cargo xtask dist`: every release artifact, into `target/dist/`:
//!
//! - Python: the wheel (abi3, CPython 3.10+, distribution `hurray-tensors`, import
//!   name `hurray`) and the sdist;
//! - Go: the module archive with its prebuilt static library, as a file-based
//!   GOPROXY in `target/dist/go-proxy/`;
//! - Maven: a repository folder `target/dist/maven/dev/hurray/hurray/<version>/`;
//! - npm: `target/dist/hurray-<version>.tgz`.
//!
//! It first refuses to run unless the workspace version is the version of every
//! package manifest ([`check_versions`]), and ends by printing each artifact's size
//! and each native library's glibc floor (the highest `GLIBC_` symbol version it
//! needs, from `objdump -T`), which must not exceed this machine's glibc.
//! docs/release.md says how a maintainer publishes them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{workspace_root, Result};

/// The workspace version (Cargo.toml `[workspace.package] version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Builds every distributable artifact and prints where each one is, its size, and
/// the glibc floor of each native library.
pub fn run() -> Result {
    let versions = check_versions()?;
    println!("dist: version {VERSION} everywhere: {versions}");
    let wheel = crate::python::build_wheel()?;
    let sdist = crate::python::build_sdist()?;
    let go_proxy = crate::go::dist()?;
    let go_zip = go_proxy
        .join(crate::go::MODULE_PATH)
        .join("@v")
        .join(format!("{}.zip", crate::go::module_version()));
    let maven = crate::java::dist(VERSION)?;
    let npm = crate::node::dist(VERSION)?;

    println!("\ndist: artifacts in {}", dist_dir().display());
    let mut listed = vec![wheel.clone(), sdist, go_zip];
    let mut maven_files: Vec<PathBuf> = std::fs::read_dir(&maven)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !p.extension().is_some_and(|x| x == "sha1" || x == "md5"))
        .collect();
    maven_files.sort();
    listed.extend(maven_files);
    listed.push(npm);
    for path in &listed {
        println!(
            "  {:>12} bytes  {}",
            std::fs::metadata(path)?.len(),
            rel(path)
        );
    }
    println!("  (Maven: each file with .sha1 and .md5 beside it)");

    let machine = machine_glibc();
    println!(
        "\ndist: glibc floors (highest GLIBC_ symbol version needed; this machine has {})",
        machine.map_or("an unknown glibc".into(), |(a, b)| format!("glibc {a}.{b}"))
    );
    let inspect = dist_dir().join("inspect");
    std::fs::create_dir_all(&inspect)?;
    let natives = [
        (
            "python extension (in the wheel)",
            extract(&wheel, "_native", &inspect)?,
        ),
        (
            "java libhurray_java.so (in the jar)",
            extract(
                &maven.join(format!("hurray-{VERSION}.jar")),
                "libhurray_java",
                &inspect,
            )?,
        ),
        (
            "npm hurray.node (stripped)",
            dist_dir().join("npm-package/hurray.node"),
        ),
    ];
    for (what, lib) in &natives {
        let floor = glibc_floor(lib)?;
        let text = floor.map_or("no versioned glibc symbols".into(), |(a, b)| {
            format!("GLIBC_{a}.{b}")
        });
        println!(
            "  {text:<14} {what} ({} bytes)",
            std::fs::metadata(lib)?.len()
        );
        if let (Some(f), Some(m)) = (floor, machine) {
            if f > m {
                return Err(format!(
                    "{what} needs GLIBC_{}.{}, newer than this machine's {}.{}",
                    f.0, f.1, m.0, m.1
                )
                .into());
            }
        }
    }
    println!(
        "  (go: libhurray_ffi.a is a static archive; its floor is set when a Go program links it, \
         and a fully static Go binary has none)"
    );
    Ok(())
}

/// The target triple of the release natives and the glibc they link against.
pub const ZIG_TRIPLE: &str = "x86_64-unknown-linux-gnu";
const ZIG_GLIBC_TARGET: &str = "x86_64-linux-gnu.2.17";

/// The packages whose cdylibs [`zig_cdylib`] builds, all in one cargo invocation:
/// built one at a time, their different unions of dependency features would
/// rebuild hurray-ffi (whose staticlib/cdylib outputs carry no hash) each time.
const ZIG_PACKAGES: &[&str] = &["hurray-java", "hurray-node"];

/// The cargo target folder of the release natives, `target/<name>`. Not `target/`:
/// the linker variable applies to build scripts and proc macros too (the host is
/// the target), so sharing a folder with the development builds would rebuild every
/// crate each time one switches to the other. The wheel (`zig-python`) and the
/// Java/Node libraries (`zig`) have one folder each, for the same reason: their
/// different unions of features would rebuild hurray-ffi at every switch.
pub fn zig_target_dir(name: &str) -> PathBuf {
    workspace_root().join("target").join(name)
}

/// Sets up `cmd` (a cargo or maturin build) to link for glibc 2.17 with zig: the
/// linker and C compiler are a wrapper script around `maturin zig cc` of the dist
/// venv (the `ziglang` package), and the target folder is [`zig_target_dir`]`(dir)`.
/// The build must pass `--target` [`ZIG_TRIPLE`].
///
/// Errors: this host is not linux x86_64 (the only platform these machines build),
/// or the dist venv (maturin, ziglang) cannot be set up.
pub fn zig_env(cmd: &mut Command, dir: &str) -> Result {
    if std::env::consts::OS != "linux" || std::env::consts::ARCH != "x86_64" {
        return Err(format!(
            "the release natives are built for linux x86_64 only (this host: {}-{}); see docs/release.md",
            std::env::consts::OS,
            std::env::consts::ARCH
        )
        .into());
    }
    let py = crate::python::dist_venv()?;
    let bin = py.parent().expect("venv/bin");
    let wrapper_dir = workspace_root().join("target/dist-zig");
    std::fs::create_dir_all(&wrapper_dir)?;
    let wrapper = wrapper_dir.join("zigcc.sh");
    let script = format!(
        "#!/bin/sh\n# Written by `cargo xtask dist`: link with zig for {ZIG_GLIBC_TARGET}.\n\
         export CARGO_ZIGBUILD_ZIG_COMMAND='{py}'\n\
         export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'\n\
         exec '{maturin}' zig cc -- -g -fno-sanitize=all -target {ZIG_GLIBC_TARGET} \"$@\"\n",
        py = py.display(),
        maturin = bin.join("maturin").display(),
    );
    // Rewritten only when it changes: cargo tracks the linker by path, not content.
    if std::fs::read_to_string(&wrapper).ok().as_deref() != Some(script.as_str()) {
        std::fs::write(&wrapper, script)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))?;
    }
    let env_triple = ZIG_TRIPLE.replace('-', "_");
    cmd.env("CARGO_TARGET_DIR", zig_target_dir(dir))
        .env(
            format!("CARGO_TARGET_{}_LINKER", env_triple.to_uppercase()),
            &wrapper,
        )
        .env(format!("CC_{env_triple}"), &wrapper);
    Ok(())
}

/// Builds the cdylibs of [`ZIG_PACKAGES`] (release, default features; once per
/// xtask process) linked by zig against glibc 2.17's symbols ([`zig_env`]), as the
/// wheel is, so they run on any glibc from 2.17 on; returns `lib<lib_name>.so` of
/// `package`.
///
/// Errors: those of [`zig_env`]; `package` is not in [`ZIG_PACKAGES`]; the build fails.
pub fn zig_cdylib(package: &str, lib_name: &str) -> Result<PathBuf> {
    if !ZIG_PACKAGES.contains(&package) {
        return Err(format!("zig_cdylib: {package} is not one of {ZIG_PACKAGES:?}").into());
    }
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    if BUILT.get().is_none() {
        let mut cmd = crate::util::cargo(["build", "--release", "--target", ZIG_TRIPLE]);
        for p in ZIG_PACKAGES {
            cmd.args(["-p", p]);
        }
        zig_env(&mut cmd, "zig")?;
        crate::util::exec(&mut cmd).map_err(|e| {
            format!("`cargo build --release --target {ZIG_TRIPLE} -p {ZIG_PACKAGES:?}` (zig linker): {e}")
        })?;
        let _ = BUILT.set(());
    }
    Ok(zig_target_dir("zig")
        .join(ZIG_TRIPLE)
        .join("release")
        .join(format!("lib{lib_name}.so")))
}

/// `target/dist`.
pub fn dist_dir() -> PathBuf {
    workspace_root().join("target/dist")
}

/// `path` relative to the workspace root, for printing.
fn rel(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Copies the first entry of the zip archive `archive` whose file name starts with
/// `prefix` and ends in `.so` into `dir`; returns the copy.
fn extract(archive: &Path, prefix: &str, dir: &Path) -> Result<PathBuf> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(archive)?)?;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i)?;
        let name = entry
            .name()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        if name.starts_with(prefix) && name.ends_with(".so") {
            let out = dir.join(&name);
            let mut file = std::fs::File::create(&out)?;
            std::io::copy(&mut entry, &mut file)?;
            return Ok(out);
        }
    }
    Err(format!("{}: no {prefix}*.so inside", archive.display()).into())
}

/// The highest `GLIBC_x.y` version among the dynamic symbols of `lib`
/// (`objdump -T`), or `None` when it needs no versioned glibc symbol.
///
/// Errors: objdump is missing or fails on the file.
pub fn glibc_floor(lib: &Path) -> Result<Option<(u32, u32)>> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(lib)
        .output()
        .map_err(|e| format!("objdump -T (binutils) is needed for the glibc floor: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "objdump -T {}: {}",
            lib.display(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(highest_glibc(&String::from_utf8_lossy(&out.stdout)))
}

/// The highest `GLIBC_major.minor` named in `text` (objdump's symbol table).
fn highest_glibc(text: &str) -> Option<(u32, u32)> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|word| word.strip_prefix("GLIBC_"))
        .filter_map(|v| {
            let mut parts = v.split('.');
            let major = parts.next()?.parse().ok()?;
            let minor = parts.next().unwrap_or("0").parse().ok()?;
            Some((major, minor))
        })
        .max()
}

/// This machine's glibc as (major, minor), from `getconf GNU_LIBC_VERSION`.
fn machine_glibc() -> Option<(u32, u32)> {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.split_whitespace().nth(1)?;
    highest_glibc(&format!("GLIBC_{v}"))
}

/// The version each package manifest declares, next to the workspace's.
///
/// Errors (the message lists every disagreement): bindings/java/pom.xml's project
/// version or bindings/node/package.json's `version` differs from the workspace
/// version, or bindings/python/pyproject.toml declares a static `version` that
/// differs (it should be `dynamic`, taken from Cargo.toml by maturin). The Go tag
/// is `v<workspace version>` by construction ([`crate::go::module_version`]).
pub fn check_versions() -> Result<String> {
    let root = workspace_root();
    let pom = std::fs::read_to_string(root.join("bindings/java/pom.xml"))?;
    let package = std::fs::read_to_string(root.join("bindings/node/package.json"))?;
    let pyproject = std::fs::read_to_string(root.join("bindings/python/pyproject.toml"))?;
    let found = [
        ("bindings/java/pom.xml", pom_version(&pom)),
        ("bindings/node/package.json", package_json_version(&package)),
        (
            "bindings/python/pyproject.toml",
            pyproject_version(&pyproject).or_else(|| Some(VERSION.to_string())),
        ),
    ];
    disagreements(VERSION, &found)?;
    Ok(format!(
        "Cargo.toml, pom.xml, package.json, pyproject.toml (dynamic, from Cargo), Go tag {}",
        crate::go::module_version()
    ))
}

/// Fails listing every manifest whose version is not `want` (or was not found).
fn disagreements(want: &str, found: &[(&str, Option<String>)]) -> Result {
    let bad: Vec<String> = found
        .iter()
        .filter(|(_, v)| v.as_deref() != Some(want))
        .map(|(file, v)| match v {
            Some(v) => format!("{file} says {v}"),
            None => format!("{file} declares no version"),
        })
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "dist: the workspace version is {want} (Cargo.toml), but {}; make them equal",
            bad.join(", ")
        )
        .into())
    }
}

/// The project's own `<version>` (the first one after `<artifactId>hurray`).
fn pom_version(pom: &str) -> Option<String> {
    let after = &pom[pom.find("<artifactId>hurray</artifactId>")?..];
    let start = after.find("<version>")? + "<version>".len();
    let len = after[start..].find("</version>")?;
    Some(after[start..start + len].trim().to_string())
}

fn package_json_version(text: &str) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    json.get("version")?.as_str().map(str::to_owned)
}

/// A static `version = "..."` line of `[project]`, if any.
fn pyproject_version(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("version") && l.contains('='))
        .map(|l| {
            l.split('=')
                .nth(1)
                .unwrap_or_default()
                .trim()
                .trim_matches('"')
                .to_string()
        })
}

/// The LICENSE file of packages that carry one (npm): the dual-license notice, then
/// LICENSE-MIT and LICENSE-APACHE of the repository root.
pub fn license_text() -> Result<String> {
    let root = workspace_root();
    let mit = std::fs::read_to_string(root.join("LICENSE-MIT"))?;
    let apache = std::fs::read_to_string(root.join("LICENSE-APACHE"))?;
    Ok(format!(
        "Hurray is licensed under either of the MIT license or the Apache License,\n\
         Version 2.0, at your option (SPDX: MIT OR Apache-2.0). Both texts follow.\n\n\
         ==== MIT ====\n\n{mit}\n==== Apache-2.0 ====\n\n{apache}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_checkout_agrees_on_one_version() {
        check_versions().unwrap();
    }

    #[test]
    fn a_different_manifest_version_is_refused_by_name() {
        let err = disagreements(
            "0.1.0",
            &[
                ("a/pom.xml", Some("0.1.0".into())),
                ("b/package.json", Some("0.2.0".into())),
                ("c/x", None),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("b/package.json says 0.2.0, c/x declares no version"),
            "{err}"
        );
        assert!(!err.contains("a/pom.xml"), "{err}");
    }

    #[test]
    fn versions_are_parsed_from_each_manifest() {
        let pom = "<parent><artifactId>p</artifactId><version>9</version></parent>\n\
                   <artifactId>hurray</artifactId>\n  <version>1.2.3</version>";
        assert_eq!(pom_version(pom).as_deref(), Some("1.2.3"));
        assert_eq!(
            package_json_version(r#"{"name":"hurray","version":"4.5.6"}"#).as_deref(),
            Some("4.5.6")
        );
        assert_eq!(
            pyproject_version("[project]\nname = \"x\"\nversion = \"7.8.9\"\n").as_deref(),
            Some("7.8.9")
        );
        assert_eq!(pyproject_version("dynamic = [\"version\"]\n"), None);
    }

    #[test]
    fn the_highest_glibc_version_wins() {
        let objdump = "0000 DF *UND* 0000 (GLIBC_2.2.5) memcpy\n\
                       0000 DF *UND* 0000 (GLIBC_2.14) memcpy\n\
                       0000 DF *UND* 0000 (GLIBC_2.3.4) __chk\n\
                       0000 DF *UND* 0000 GLIBC_2.9 pipe2\n";
        assert_eq!(highest_glibc(objdump), Some((2, 14)));
        assert_eq!(highest_glibc("no versions here"), None);
    }
}
