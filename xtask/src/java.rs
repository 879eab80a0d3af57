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
//!
//! For `cargo xtask dist`, [`dist`] deploys the release (zig-linked, stripped library;
//! sources and javadoc jars) into the repository folder `target/dist/maven`, and the
//! `dist: Maven ...` stage ([`dist_check`]) uses it from a fresh project.

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

/// The jar `mvn package` writes: the newest `hurray-*.jar` (an older version's jar
/// left in the folder must not shadow the one just built).
fn jar() -> Result<PathBuf> {
    let target = project_dir().join("target");
    std::fs::read_dir(&target)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("hurray-")
                    && n.ends_with(".jar")
                    && !n.ends_with("-sources.jar")
                    && !n.ends_with("-javadoc.jar")
            })
        })
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
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

/// The Maven repository folder `cargo xtask dist` writes (a `file://` repository).
pub fn dist_repo() -> PathBuf {
    workspace_root().join("target/dist/maven")
}

/// Builds the native library (linked for glibc 2.17 with zig, stripped) into the
/// resource tree, then `mvn -Prelease -DskipTests deploy` into
/// [`dist_repo`]: `dev/hurray/hurray/<version>/` with the pom, the jar (native
/// library under `dev/hurray/native/<os>-<arch>/`), `-sources.jar`, `-javadoc.jar`,
/// and their `.sha1`/`.md5` checksums. Checks the jar holds the library and the
/// manifest's `Enable-Native-Access: ALL-UNNAMED`. Returns the version folder.
///
/// Errors: the JDK or Maven is missing, a build step fails, or a file is missing.
pub fn dist(version: &str) -> Result<PathBuf> {
    if let Some(why) = missing_toolchain() {
        return Err(why.into());
    }
    // The release library: linked by zig against glibc 2.17 (as the wheel is), stripped.
    let built = crate::dist::zig_cdylib("hurray-java", "hurray_java")?;
    let dir = native_dir().join("dev/hurray/native").join(platform());
    std::fs::create_dir_all(&dir)?;
    let lib = dir.join(built.file_name().expect("a file"));
    exec(
        Command::new("strip")
            .args(["--strip-unneeded", "-o"])
            .arg(&lib)
            .arg(&built),
    )
    .map_err(|e| format!("strip {}: {e}", built.display()))?;
    let repo = dist_repo();
    let folder = repo.join("dev/hurray/hurray").join(version);
    if folder.exists() {
        std::fs::remove_dir_all(&folder)?;
    }
    let url = format!(
        "-DaltDeploymentRepository=hurray-dist::file://{}",
        repo.display()
    );
    exec(&mut mvn(["-Prelease", "-DskipTests", "deploy", &url]))
        .map_err(|e| format!("`mvn -Prelease -DskipTests deploy {url}`: {e}"))?;
    let base = format!("hurray-{version}");
    for suffix in [".pom", ".jar", "-sources.jar", "-javadoc.jar"] {
        for sum in ["", ".sha1", ".md5"] {
            let f = folder.join(format!("{base}{suffix}{sum}"));
            if !f.is_file() {
                return Err(format!("mvn deploy wrote no {}", f.display()).into());
            }
        }
    }
    let jar = folder.join(format!("{base}.jar"));
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&jar)?)?;
    let entry = format!(
        "dev/hurray/native/{}/{}",
        platform(),
        lib.file_name().and_then(|n| n.to_str()).unwrap_or_default()
    );
    let size = zip
        .by_name(&entry)
        .map_err(|e| format!("{}: no {entry}: {e}", jar.display()))?
        .size();
    if size != std::fs::metadata(&lib)?.len() {
        return Err(format!("{}: {entry} is not the library just built", jar.display()).into());
    }
    let mut manifest = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("META-INF/MANIFEST.MF")?, &mut manifest)?;
    if !manifest.contains("Enable-Native-Access: ALL-UNNAMED") {
        return Err(format!("{}: the manifest lacks Enable-Native-Access", jar.display()).into());
    }
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let entry = format!("META-INF/{license}");
        let size = zip
            .by_name(&entry)
            .map_err(|e| format!("{}: no {entry} (the license text): {e}", jar.display()))?
            .size();
        if size != std::fs::metadata(workspace_root().join(license))?.len() {
            return Err(format!("{}: {entry} differs from {license}", jar.display()).into());
        }
    }
    Ok(folder)
}

/// The install check's program (`IN OUT`, [`crate::smoke`]).
const SMOKE_JAVA: &str = r#"import dev.hurray.*;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Arrays;

public class Smoke {
    public static void main(String[] args) throws Exception {
        float[] values;
        try (TensorFile f = TensorFile.open(Path.of(args[0]));
                Tensor t = f.tensor("weights")) {
            if (!Arrays.equals(t.shape(), new long[] {2, 2})) {
                throw new AssertionError("shape " + Arrays.toString(t.shape()));
            }
            FloatBuffer view = t.floats();
            values = new float[view.remaining()];
            view.get(values);
        }
        for (int i = 0; i < values.length; i++) {
            values[i] += i + 1;
        }
        ByteBuffer data = Tensor.allocate(values.length * 4);
        data.asFloatBuffer().put(values);
        try (TensorFileWriter w = TensorFileWriter.create(Path.of(args[1]));
                Tensor t = Tensor.dense(ElementType.FLOAT32, data, 2, 2)) {
            w.write("weights", t);
            w.finish();
        }
        System.out.println("java: ok " + Arrays.toString(values));
    }
}
"#;

/// The fresh consumer's pom: the dist folder as its one extra repository, plugins
/// pinned (they come from Maven Central into the empty local repository).
fn smoke_pom(version: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>consumer</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <repositories>
    <repository>
      <id>hurray-dist</id>
      <url>file://{repo}</url>
    </repository>
  </repositories>
  <dependencies>
    <dependency>
      <groupId>dev.hurray</groupId>
      <artifactId>hurray</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
    </plugins>
  </build>
</project>
"#,
        repo = dist_repo().display()
    )
}

/// Stage: builds the repository folder ([`dist`]), then a new Maven project outside
/// the repository, with an empty local repository (`-Dmaven.repo.local`) and the
/// dist folder as its one extra repository, compiles a program against the jar and
/// runs it ([`crate::smoke`]), with no cargo or rustc on `PATH` for either step.
pub fn dist_check() -> Result {
    let version = env!("CARGO_PKG_VERSION");
    dist(version)?;
    let input = crate::smoke::input()?;
    let work = crate::smoke::fresh_dir("maven-check")?;
    // A build without the native library fails (even with -DskipTests).
    let empty = work.join("no-native");
    std::fs::create_dir_all(&empty)?;
    let refused = Command::new("mvn")
        .args(["-B", "-q", "-Dstyle.color=never", "-DskipTests", "validate"])
        .arg(format!("-Dhurray.native.dir={}", empty.display()))
        .current_dir(project_dir())
        .output()
        .map_err(|e| format!("mvn validate: {e}"))?;
    let said = String::from_utf8_lossy(&refused.stdout);
    if refused.status.success() || !said.contains("The jar must carry the native library") {
        return Err(format!(
            "bindings/java: a build without the native library must fail at validate; got {}: {said}",
            refused.status
        )
        .into());
    }
    println!("java: a build without the native library fails: \"The jar must carry the native library ...\"");
    let local = work.join("m2");
    std::fs::create_dir_all(work.join("src/main/java"))?;
    std::fs::write(work.join("pom.xml"), smoke_pom(version))?;
    std::fs::write(work.join("src/main/java/Smoke.java"), SMOKE_JAVA)?;
    let path = crate::smoke::path_without_rust();
    exec(
        Command::new("mvn")
            .args(["-B", "-q", "-Dstyle.color=never"])
            .arg(format!("-Dmaven.repo.local={}", local.display()))
            .arg("compile")
            .env("PATH", &path)
            .current_dir(&work),
    )
    .map_err(|e| format!("mvn compile in {}: {e}", work.display()))?;
    let jar = local
        .join("dev/hurray/hurray")
        .join(version)
        .join(format!("hurray-{version}.jar"));
    if !jar.is_file() {
        return Err(format!("{} was not fetched from the dist folder", jar.display()).into());
    }
    let out = work.join("from-java.hrry");
    exec(
        Command::new("java")
            .arg("-cp")
            .arg(format!(
                "{}:{}",
                work.join("target/classes").display(),
                jar.display()
            ))
            .arg("Smoke")
            .arg(&input)
            .arg(&out)
            .env("PATH", &path)
            .current_dir(&work),
    )
    .map_err(|e| format!("java Smoke in {}: {e}", work.display()))?;
    crate::smoke::verify("java", &input, &out)?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
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
            || {
                let cli = crate::util::hurray_cli()?;
                exec(mvn(["package"]).env("HURRAY_BIN", cli))
                    .map_err(|e| format!("`mvn package`: {e}").into())
            },
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
        java_stage(
            "dist: Maven repository folder (pom, jar with native library, -sources, -javadoc, checksums) used by a fresh Maven project with an empty local repository, no Rust on PATH; its program reads and writes",
            dist_check,
        ),
    ]
}
