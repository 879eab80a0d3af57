//! `cargo xtask java build`, and the Java stages of `cargo xtask test`.
//!
//! The Java binding is two parts: the JNI glue crate `bindings/java/native`
//! (`hurray-java`, a cdylib over the hurray-ffi rlib) and the Maven project
//! `bindings/java` (`dev.hurray:hurray`), whose jar carries the glue library as the
//! resource `dev/hurray/native/<os>-<arch>/libhurray_java.so`.
//!
//! `cargo xtask java build` builds the glue in release mode and copies it to
//! `target/java-native/dev/hurray/native/<os>-<arch>/`, the extra resource directory
//! the POM declares (property `hurray.native.dir`), so `mvn package` puts it in the
//! jar and the tests load it from the class path, as users will. The test stages do
//! the same build, run `mvn -B -q package` (the JUnit suite, then the jar), and run
//! the jar's `dev.hurray.Hurray` main in a fresh JVM, which extracts and loads the
//! library and checks the ABI version. Each stage skips itself with a note when
//! `java` (17 or newer) or `mvn` is absent.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use clap::{Args, Subcommand};

use crate::matrix::Lang;
use crate::test::{Outcome, Stage};
use crate::util::{cargo, exec, workspace_root, Result};

/// Arguments of `cargo xtask java`.
#[derive(Debug, Args)]
pub struct JavaArgs {
    #[command(subcommand)]
    command: JavaCommand,
}

#[derive(Debug, Subcommand)]
enum JavaCommand {
    /// Build libhurray_java (release) into target/java-native, where the Maven build
    /// of bindings/java picks it up as a jar resource.
    Build,
}

/// Runs `cargo xtask java ...`.
pub fn run(args: &JavaArgs) -> Result {
    match args.command {
        JavaCommand::Build => {
            let lib = build_native()?;
            println!("wrote {}", lib.display());
            Ok(())
        }
    }
}

/// The oldest Java the binding supports.
const MIN_JAVA: u32 = 17;

/// The Maven project.
fn project_dir() -> PathBuf {
    workspace_root().join("bindings/java")
}

/// The resource root the POM adds (`hurray.native.dir`).
fn native_dir() -> PathBuf {
    workspace_root().join("target/java-native")
}

/// `linux-x86_64`, `macos-aarch64`, ...: the platform folder `NativeLoader.java` looks
/// in (Rust's OS and architecture names, which the Java side maps to).
fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

/// Builds the glue library (release) and copies it into the resource tree.
pub fn build_native() -> Result<PathBuf> {
    exec(&mut cargo(["build", "--release", "-p", "hurray-java"]))
        .map_err(|e| format!("`cargo build --release -p hurray-java`: {e}"))?;
    let name = format!(
        "{}hurray_java{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let built = workspace_root().join("target/release").join(&name);
    let dir = native_dir().join("dev/hurray/native").join(platform());
    std::fs::create_dir_all(&dir)?;
    let dest = dir.join(&name);
    std::fs::copy(&built, &dest)
        .map_err(|e| format!("copy {} -> {}: {e}", built.display(), dest.display()))?;
    Ok(dest)
}

/// The major version of `java` on PATH, if any (`openjdk version "17.0.15"`).
fn java_major() -> Option<u32> {
    let out = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let quoted = text.split('"').nth(1)?;
    let first: String = quoted.chars().take_while(char::is_ascii_digit).collect();
    match first.parse().ok()? {
        // Java 8 and older print 1.x.
        1 => quoted.split('.').nth(1)?.parse().ok(),
        n => Some(n),
    }
}

fn has_mvn() -> bool {
    Command::new("mvn")
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Why Java stages cannot run here, if they cannot.
fn missing_toolchain() -> Option<String> {
    match java_major() {
        None => {
            return Some("`java` not found; install a JDK 17 or newer to test bindings/java".into())
        }
        Some(v) if v < MIN_JAVA => {
            return Some(format!(
                "java {v} is too old; bindings/java needs Java {MIN_JAVA} or newer"
            ))
        }
        Some(_) => {}
    }
    if !has_mvn() {
        return Some("`mvn` not found; install Maven to test bindings/java".into());
    }
    None
}

/// A Java stage: skipped with a note when the JDK or Maven is missing.
fn java_stage(name: &str, run: impl Fn() -> Result + 'static) -> Stage {
    Stage {
        name: name.to_string(),
        run: Box::new(move || match missing_toolchain() {
            Some(why) => Ok(Outcome::Skipped(why)),
            None => run().map(|()| Outcome::Passed),
        }),
    }
}

/// `mvn -B -q <args>` in the project, with the resource directory made explicit.
fn mvn<const N: usize>(args: [&str; N]) -> Command {
    let mut cmd = Command::new("mvn");
    cmd.args(["-B", "-q", "-Dstyle.color=never"])
        .arg(format!("-Dhurray.native.dir={}", native_dir().display()))
        .args(args)
        .current_dir(project_dir());
    cmd
}

/// The jar `mvn package` writes.
fn jar() -> Result<PathBuf> {
    let target = project_dir().join("target");
    std::fs::read_dir(&target)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("hurray-") && n.ends_with(".jar"))
        })
        .ok_or_else(|| format!("no hurray-*.jar in {}", target.display()).into())
}

/// The matrix program `tests/matrix/java/Matrix.java` and `Hostile.java`, compiled
/// against the jar (`mvn package -DskipTests`) into `target/matrix/java`; `Err(note)`
/// inside when the JDK or Maven is missing.
pub fn build_matrix() -> Result<std::result::Result<Lang, String>> {
    if let Some(why) = missing_toolchain() {
        return Ok(Err(why));
    }
    build_native()?;
    exec(&mut mvn(["package", "-DskipTests"]))
        .map_err(|e| format!("`mvn package -DskipTests`: {e}"))?;
    let jar = jar()?;
    let classes = workspace_root().join("target/matrix/java");
    std::fs::create_dir_all(&classes)?;
    exec(
        Command::new("javac")
            .args(["-Xlint:all", "-Werror", "-cp"])
            .arg(&jar)
            .arg("-d")
            .arg(&classes)
            .arg(workspace_root().join("tests/matrix/java/Matrix.java"))
            .arg(workspace_root().join("tests/matrix/java/Hostile.java")),
    )
    .map_err(|e| format!("`javac tests/matrix/java/Matrix.java Hostile.java`: {e}"))?;
    let sep = if cfg!(windows) { ";" } else { ":" };
    let cp = format!("{}{sep}{}", jar.display(), classes.display());
    Ok(Ok(Lang {
        name: "java",
        argv: vec!["java".into(), "-cp".into(), cp.into(), "Matrix".into()],
    }))
}

/// Runs the jar's `dev.hurray.Hurray` main in a fresh JVM (with the library from
/// `-Dhurray.native.path` when given) and checks that it reports C ABI 10.
fn hurray_main(jar: &std::path::Path, lib: Option<&std::path::Path>) -> Result<String> {
    let mut cmd = Command::new("java");
    if let Some(lib) = lib {
        cmd.arg(format!("-Dhurray.native.path={}", lib.display()));
    }
    let out = cmd
        .arg("-cp")
        .arg(jar)
        .arg("dev.hurray.Hurray")
        .output()
        .map_err(|e| format!("could not run java: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !text.contains("C ABI 10") {
        return Err(format!(
            "`java -cp {} dev.hurray.Hurray` (library {}) failed ({}): {text}{}",
            jar.display(),
            lib.map_or("from the jar".into(), |l| l.display().to_string()),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(text)
}

/// The Java stages of `cargo xtask test`, in order.
pub fn stages() -> Vec<Stage> {
    vec![
        java_stage(
            "java: build libhurray_java (release) into target/java-native (jar resource)",
            || build_native().map(|_| ()),
        ),
        java_stage(
            "java: mvn -B -q package (JUnit suite, then the jar) in bindings/java",
            || exec(&mut mvn(["package"])).map_err(|e| format!("`mvn package`: {e}").into()),
        ),
        java_stage(
            "java: a fresh JVM loads the native library from the jar, and from -Dhurray.native.path (java -cp hurray.jar dev.hurray.Hurray)",
            || {
                let jar = jar()?;
                let lib = workspace_root().join("target/release").join(format!(
                    "{}hurray_java{}",
                    std::env::consts::DLL_PREFIX,
                    std::env::consts::DLL_SUFFIX
                ));
                let from_jar = hurray_main(&jar, None)?;
                let from_path = hurray_main(&jar, Some(&lib))?;
                print!("{from_jar}{from_path}");
                Ok(())
            },
        ),
    ]
}
