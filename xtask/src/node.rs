//! `cargo xtask node build [--check]`, and the Node stages of `cargo xtask test`.
//!
//! The npm package lives in `bindings/node`: `index.js` loads `hurray.node`, the
//! `hurray-node` cdylib (napi-rs over hurray-ffi) built here in release with the
//! `test-support` feature and copied beside it (never committed). Its TypeScript
//! types for the native part, `bindings/node/native.d.ts`, are generated from
//! napi-derive's type-def output (the macros write one JSON line per exported item
//! to `$NAPI_TYPE_DEF_TMP_FOLDER/hurray-node` while the crate compiles) and committed;
//! `--check` (and the test stage) fails when the committed file drifts. The
//! hand-written `index.d.ts` re-exports them and adds the JS stream helpers.
//!
//! The test stages skip themselves with a note when `node` is missing or older than
//! 18. The tests need no npm packages (`node --test`); the type check installs the
//! two pinned in `bindings/node/package-lock.json` (typescript, @types/node) with
//! `npm ci` and skips itself with a note when `npm` is missing.
//!
//! For `cargo xtask dist`, [`dist`] packs the npm tarball (addon without test support,
//! zig-linked and stripped; `lib/testing.js` and the test-support lines of
//! `lib/native.js` left out), and the `dist: npm ...` stage ([`dist_check`]) installs
//! it into a fresh project.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use clap::{Args, Subcommand};

use crate::test::{Outcome, Stage};
use crate::util::{cargo, exec, workspace_root, Result};

/// Arguments of `cargo xtask node`.
#[derive(Debug, Args)]
pub struct NodeArgs {
    #[command(subcommand)]
    command: NodeCommand,
}

#[derive(Debug, Subcommand)]
enum NodeCommand {
    /// Build the addon (release, with test support) into bindings/node/hurray.node
    /// and regenerate bindings/node/native.d.ts.
    Build {
        /// Fail instead of rewriting native.d.ts when it is not current.
        #[arg(long)]
        check: bool,
    },
}

/// Runs `cargo xtask node ...`.
pub fn run(args: &NodeArgs) -> Result {
    match args.command {
        NodeCommand::Build { check } => {
            let addon = build(check)?;
            println!("wrote {}", addon.display());
            Ok(())
        }
    }
}

/// The package directory.
pub fn package_dir() -> PathBuf {
    workspace_root().join("bindings/node")
}

/// The command that fixes a stale native.d.ts or a missing addon.
const FIX_COMMAND: &str = "cargo xtask node build";

/// The generated types file, relative to the package.
const TYPES_FILE: &str = "native.d.ts";

/// Native functions that exist only with the `test-support` feature (exposed by
/// `lib/testing.js`, not part of the public types).
const TEST_ONLY_PREFIX: &str = "debug";

/// The cargo target directory (`$CARGO_TARGET_DIR`, else `target/`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// Newest modification time of the files below `dir`.
fn newest(dir: &Path) -> Result<SystemTime> {
    let mut t = SystemTime::UNIX_EPOCH;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let m = e.metadata()?;
        let mt = if m.is_dir() {
            newest(&e.path())?
        } else {
            m.modified()?
        };
        t = t.max(mt);
    }
    Ok(t)
}

/// Builds the addon, copies it to `bindings/node/hurray.node` and brings
/// `native.d.ts` up to date (`check`: fails instead when it differs). Returns the
/// addon's path.
pub fn build(check: bool) -> Result<PathBuf> {
    let crate_dir = package_dir();
    let typedef_dir = target_dir().join("napi-typedef");
    let typedef = typedef_dir.join("hurray-node");
    std::fs::create_dir_all(&typedef_dir)?;
    // The macros write the type defs only when they run, i.e. when cargo compiles
    // the crate. If the sources changed since the defs were written (or there are
    // none), touch them so that this build compiles the crate and rewrites them.
    let sources = [crate_dir.join("src"), crate_dir.join("Cargo.toml")];
    let mut src_time = newest(&sources[0])?;
    src_time = src_time.max(std::fs::metadata(&sources[1])?.modified()?);
    let defs_time = std::fs::metadata(&typedef).and_then(|m| m.modified()).ok();
    if defs_time.is_none_or(|t| t < src_time) {
        let _ = std::fs::remove_file(&typedef);
        let lib = crate_dir.join("src/lib.rs");
        std::fs::File::options()
            .append(true)
            .open(&lib)?
            .set_modified(SystemTime::now())?;
    }
    exec(
        cargo([
            "build",
            "-p",
            "hurray-node",
            "--release",
            "--features",
            "test-support",
        ])
        .env("NAPI_TYPE_DEF_TMP_FOLDER", &typedef_dir),
    )
    .map_err(|e| format!("`cargo build -p hurray-node --release` failed: {e}"))?;
    let (prefix, suffix) = if cfg!(windows) {
        ("", "dll")
    } else if cfg!(target_os = "macos") {
        ("lib", "dylib")
    } else {
        ("lib", "so")
    };
    let built = target_dir()
        .join("release")
        .join(format!("{prefix}hurray_node.{suffix}"));
    let addon = crate_dir.join("hurray.node");
    let bytes =
        std::fs::read(&built).map_err(|e| format!("cannot read {}: {e}", built.display()))?;
    if std::fs::read(&addon).ok().as_deref() != Some(&bytes[..]) {
        // Replace, never rewrite in place: a running node may have the old one mapped.
        let tmp = crate_dir.join("hurray.node.tmp");
        std::fs::write(&tmp, &bytes)?;
        std::fs::rename(&tmp, &addon)?;
    }
    let lines = std::fs::read_to_string(&typedef).map_err(|e| {
        format!(
            "no type defs at {} ({e}); touch bindings/node/src/lib.rs and rerun `{FIX_COMMAND}`",
            typedef.display()
        )
    })?;
    let fresh = render_types(&lines)?;
    let path = crate_dir.join(TYPES_FILE);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if old.replace("\r\n", "\n") != fresh {
        if check {
            return Err(format!(
                "bindings/node/{TYPES_FILE} is not current; regenerate it with \
                 `{FIX_COMMAND}` and commit the result"
            )
            .into());
        }
        std::fs::write(&path, &fresh)?;
        println!("wrote {}", path.display());
    }
    Ok(addon)
}

/// One item of napi-derive's type-def output.
struct Item {
    kind: String,
    name: String,
    js_doc: String,
    def: String,
}

/// Renders napi-derive's type-def lines (JSON, one per exported item) as a `.d.ts`:
/// classes (a `struct` line, then its `impl` lines), interfaces, functions; sorted
/// by name so the file does not depend on compilation order. Test-only functions
/// ([`TEST_ONLY_PREFIX`]) are left out.
pub fn render_types(lines: &str) -> Result<String> {
    let mut items = Vec::new();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("bad type-def line {line:?}: {e}"))?;
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        items.push(Item {
            kind: s("kind"),
            name: s("name"),
            js_doc: s("js_doc"),
            def: s("def"),
        });
    }
    // Members are indented two spaces; the ` * ` lines of a doc comment three.
    let indent = |text: &str| -> String {
        text.lines()
            .map(|l| match l.trim() {
                "" => "\n".to_string(),
                t if t.starts_with('*') => format!("   {t}\n"),
                t => format!("  {t}\n"),
            })
            .collect::<String>()
    };
    let mut names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut out = String::from(
        "// Generated by `cargo xtask node build` from napi-derive's type-def output of\n\
         // bindings/node/src (the doc comments there). Do not edit: `cargo xtask test`\n\
         // fails when this file is not current.\n\n",
    );
    for name in names {
        let of = |kind: &'static str| -> Vec<&Item> {
            items
                .iter()
                .filter(|i| i.name == name && i.kind == kind)
                .collect()
        };
        if let Some(s) = of("struct").first() {
            out += &s.js_doc;
            out += &format!("export declare class {name} {{\n");
            for imp in of("impl") {
                out += &indent(&imp.def);
            }
            out += "}\n\n";
        }
        for i in of("interface") {
            out += &i.js_doc;
            out += &format!("export interface {name} {{\n{}}}\n\n", indent(&i.def));
        }
        for f in of("fn") {
            if name.starts_with(TEST_ONLY_PREFIX) {
                continue;
            }
            out += &f.js_doc;
            out += &format!("export declare {}\n\n", f.def.trim());
        }
        if let Some(other) = items.iter().find(|i| {
            i.name == name && !["struct", "impl", "interface", "fn"].contains(&i.kind.as_str())
        }) {
            return Err(format!(
                "type-def kind {:?} ({name}) is not rendered yet; extend xtask/src/node.rs",
                other.kind
            )
            .into());
        }
    }
    Ok(out.trim_end().to_string() + "\n")
}

/// The installed Node's major version, from `node --version` (`v20.20.2`); None when
/// `node` does not run.
fn node_major() -> Option<u32> {
    let out = Command::new("node")
        .arg("--version")
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The oldest Node the package supports.
const MIN_NODE: u32 = 18;

/// Whether a `node` of at least [`MIN_NODE`] runs here.
pub fn has_node() -> bool {
    node_major().is_some_and(|v| v >= MIN_NODE)
}

/// A Node stage: skipped with a note when `node` is absent or older than [`MIN_NODE`].
fn node_stage(name: &str, run: impl Fn() -> Result + 'static) -> Stage {
    Stage {
        name: name.to_string(),
        run: Box::new(move || match node_major() {
            None => Ok(Outcome::Skipped(format!(
                "`node` not found; install Node.js {MIN_NODE} or newer to test bindings/node"
            ))),
            Some(v) if v < MIN_NODE => Ok(Outcome::Skipped(format!(
                "node {v} is too old; bindings/node needs Node.js {MIN_NODE} or newer"
            ))),
            Some(_) => run().map(|()| Outcome::Passed),
        }),
    }
}

/// `node --expose-gc --test` over the package's tests.
fn node_test() -> Result {
    let mut cmd = Command::new("node");
    cmd.args(["--expose-gc", "--test", "--test-reporter=spec"])
        .current_dir(package_dir())
        .env("HURRAY_REPO_ROOT", workspace_root())
        // The server of test/net.test.js.
        .env("HURRAY_BIN", crate::util::hurray_cli()?);
    // Pass the test files themselves: a directory would also run test/helpers.js.
    let mut files: Vec<String> = std::fs::read_dir(package_dir().join("test"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".test.js") || n.ends_with(".test.mjs"))
        .map(|n| format!("test/{n}"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err("bindings/node/test has no *.test.js or *.test.mjs files".into());
    }
    cmd.args(&files);
    exec(&mut cmd).map_err(|e| format!("node --test failed: {e}").into())
}

/// Whether `npm --version` runs.
fn has_npm() -> bool {
    Command::new("npm")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `npm ci` (the pinned typescript and @types/node), then `tsc -p tsconfig.json`
/// and `tsc -p tsconfig.esm.json`: the published types compile under `--strict`
/// and describe the API `test/types-check.ts` (CommonJS) and `test/esm-check.mts`
/// (an ES module, module nodenext) use.
fn type_check() -> Result<Outcome> {
    if !has_npm() {
        return Ok(Outcome::Skipped(
            "`npm` not found; it installs typescript for the type check".into(),
        ));
    }
    exec(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(package_dir()),
    )
    .map_err(|e| format!("npm ci in bindings/node failed: {e}"))?;
    // tsconfig.json: the CommonJS consumer (test/types-check.ts); tsconfig.esm.json:
    // an ES module importing the package by name under module nodenext
    // (test/esm-check.mts).
    for config in ["tsconfig.json", "tsconfig.esm.json"] {
        exec(
            Command::new("node")
                .args(["node_modules/typescript/bin/tsc", "-p", config])
                .current_dir(package_dir()),
        )
        .map_err(|e| format!("tsc -p bindings/node/{config} failed: {e}"))?;
    }
    Ok(Outcome::Passed)
}

/// The package's files that go into the npm tarball as they are (relative to
/// `bindings/node`); `lib/native.js` goes with its test-support lines removed, and
/// `lib/testing.js` (the test-only natives) stays out.
const PACKED_AS_IS: &[&str] = &[
    "index.js",
    "index.mjs",
    "index.d.ts",
    "native.d.ts",
    "tables.d.ts",
    "README.md",
    "lib/idioms.js",
    "lib/net.js",
    "lib/stream.js",
];

/// Names that must not appear in any file of the tarball (test-support natives and
/// entry points; the repository's own tests keep them).
const TEST_ONLY_NAMES: &[&str] = &[
    "uncheckedFromBuffer",
    "debugDestroyOnOtherThread",
    "debugLiveObjects",
    "hurray/testing",
    "./testing",
];

/// `text` without the lines from `// test-support:begin` to `// test-support:end`.
///
/// Errors: the markers are missing or unbalanced (the test support would ship).
fn strip_test_support(text: &str) -> Result<String> {
    let mut out = String::new();
    let mut inside = false;
    let mut blocks = 0;
    for line in text.lines() {
        if line.trim_start().starts_with("// test-support:begin") {
            if inside {
                return Err("nested `// test-support:begin`".into());
            }
            inside = true;
            blocks += 1;
        } else if line.trim_start().starts_with("// test-support:end") {
            if !inside {
                return Err("`// test-support:end` without a begin".into());
            }
            inside = false;
        } else if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    if inside || blocks == 0 {
        return Err("lib/native.js: no complete `// test-support:begin` ... `end` block".into());
    }
    Ok(out)
}

/// The published package.json: name, description, license, repository and engines
/// of the repository's, `version` set to `version`, the tarball's file list, and an
/// exports map without `./testing`. Written out by hand because the order of export
/// conditions matters (the first match wins: `types`, `import`, `require`, then
/// `default`), and serde_json here does not keep the order of keys.
fn published_manifest(repo_manifest: &str, version: &str) -> Result<String> {
    let json: serde_json::Value = serde_json::from_str(repo_manifest)?;
    let field = |key: &str| -> Result<String> {
        let v = json
            .get(key)
            .ok_or_else(|| format!("bindings/node/package.json has no `{key}`"))?;
        Ok(serde_json::to_string(v)?)
    };
    let mut files: Vec<&str> = PACKED_AS_IS.to_vec();
    files.extend(["lib/native.js", "hurray.node", "LICENSE"]);
    let files = serde_json::to_string(&files)?;
    Ok(format!(
        r#"{{
  "name": {name},
  "version": {version},
  "description": {description},
  "license": {license},
  "repository": {repository},
  "main": "index.js",
  "types": "index.d.ts",
  "exports": {{
    ".": {{
      "types": "./index.d.ts",
      "import": "./index.mjs",
      "require": "./index.js",
      "default": "./index.js"
    }},
    "./package.json": "./package.json"
  }},
  "files": {files},
  "os": ["linux"],
  "cpu": ["x64"],
  "engines": {engines}
}}
"#,
        name = field("name")?,
        version = serde_json::to_string(version)?,
        description = field("description")?,
        license = field("license")?,
        repository = field("repository")?,
        engines = field("engines")?,
    ))
}

/// Builds the npm tarball into `target/dist`: the addon built in release *without*
/// the `test-support` feature, linked for glibc 2.17 with zig, and stripped, the JS entries (CommonJS `index.js`,
/// ESM `index.mjs`), the types, README.md and LICENSE, and a package.json without
/// the `./testing` export. Fails when any packed file still names a test-only
/// native. Returns the tarball's path.
pub fn dist(version: &str) -> Result<PathBuf> {
    // Linked by zig against glibc 2.17 (as the wheel is); stripped below.
    let built = crate::dist::zig_cdylib("hurray-node", "hurray_node")?;
    let stage = target_dir().join("dist/npm-package");
    if stage.exists() {
        std::fs::remove_dir_all(&stage)?;
    }
    std::fs::create_dir_all(stage.join("lib"))?;
    let pkg = package_dir();
    for f in PACKED_AS_IS {
        std::fs::copy(pkg.join(f), stage.join(f))
            .map_err(|e| format!("copy bindings/node/{f}: {e}"))?;
    }
    let native = std::fs::read_to_string(pkg.join("lib/native.js"))?;
    std::fs::write(stage.join("lib/native.js"), strip_test_support(&native)?)?;
    std::fs::write(stage.join("LICENSE"), crate::dist::license_text()?)?;
    let manifest = std::fs::read_to_string(pkg.join("package.json"))?;
    std::fs::write(
        stage.join("package.json"),
        published_manifest(&manifest, version)?,
    )?;
    let addon = stage.join("hurray.node");
    exec(
        Command::new("strip")
            .args(["--strip-unneeded", "-o"])
            .arg(&addon)
            .arg(&built),
    )
    .map_err(|e| format!("strip {}: {e}", built.display()))?;
    let sections = Command::new("readelf")
        .arg("-SW")
        .arg(&addon)
        .output()
        .map_err(|e| format!("readelf -S {}: {e}", addon.display()))?;
    if !sections.status.success() || String::from_utf8_lossy(&sections.stdout).contains(".symtab") {
        return Err(format!("{} still has a symbol table after strip", addon.display()).into());
    }
    // Nothing test-only in any packed file, the addon included.
    for entry in walk(&stage)? {
        let bytes = std::fs::read(&entry)?;
        for name in TEST_ONLY_NAMES {
            if bytes.windows(name.len()).any(|w| w == name.as_bytes()) {
                return Err(format!(
                    "npm package: {} contains the test-only `{name}`",
                    entry.display()
                )
                .into());
            }
        }
    }
    let out = target_dir().join("dist");
    let tarball = out.join(format!("hurray-{version}.tgz"));
    let _ = std::fs::remove_file(&tarball);
    exec(
        Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(&out)
            .current_dir(&stage)
            .stdout(Stdio::null()),
    )
    .map_err(|e| format!("npm pack in {}: {e}", stage.display()))?;
    if !tarball.is_file() {
        return Err(format!("npm pack wrote no {}", tarball.display()).into());
    }
    Ok(tarball)
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            out.extend(walk(&p)?);
        } else {
            out.push(p);
        }
    }
    Ok(out)
}

/// The install check's CommonJS program (`IN OUT`, [`crate::smoke`]); it also checks
/// that `hurray/testing` is not exported.
const SMOKE_CJS: &str = r#"'use strict';
const { FileReader, FileWriter, Tensor, alloc } = require('hurray');
const [input, output] = process.argv.slice(2);
const r = FileReader.open(input);
const t = r.tensor('weights');
r.close();
if (JSON.stringify(Array.from(t.shape)) !== '[2,2]') throw new Error(`shape ${t.shape}`);
const data = new Float32Array(alloc(4 * 4));
data.set(t.array());
data.forEach((v, i) => (data[i] = v + i + 1));
const m = Tensor.fromBuffer(data, 'float32', [2, 2]);
const w = FileWriter.create(output);
w.writeTensor('weights', m);
w.finish();
w.close();
m.close();
t.close();
let code = 'none';
try { require('hurray/testing'); } catch (e) { code = e.code; }
if (code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw new Error(`hurray/testing: ${code}`);
console.log('node (cjs): ok', Array.from(data));
"#;

/// The ES module program: the same with named imports.
const SMOKE_MJS: &str = r#"import { FileReader, FileWriter, Tensor, alloc } from 'hurray';
const [input, output] = process.argv.slice(2);
const r = FileReader.open(input);
const t = r.tensor('weights');
r.close();
const data = new Float32Array(alloc(4 * 4));
data.set(t.array());
data.forEach((v, i) => (data[i] = v + i + 1));
const m = Tensor.fromBuffer(data, 'float32', [2, 2]);
const w = FileWriter.create(output);
w.writeTensor('weights', m);
w.finish();
w.close();
m.close();
t.close();
console.log('node (esm): ok', Array.from(data));
"#;

/// Type-checked (not run) under `tsc --strict`, `module: nodenext`.
const SMOKE_MTS: &str = r#"import { FileReader, Tensor, alloc } from 'hurray';
import * as hurray from 'hurray';
const r: FileReader = FileReader.open('x.hrry');
const t: Tensor = r.tensor('weights');
const shape: number[] = Array.from(t.shape);
const bytes: ArrayBuffer = alloc(16);
console.log(shape, bytes.byteLength, hurray.typeName(3));
"#;

const SMOKE_TSCONFIG: &str = r#"{
  "compilerOptions": {
    "strict": true,
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "target": "es2022",
    "noEmit": true,
    "types": ["node"]
  },
  "files": ["check.mts"]
}
"#;

/// Stage: builds the tarball ([`dist`]), installs it into a new npm project outside
/// the repository with an empty npm cache (plus the pinned typescript and
/// @types/node from the registry), runs the CommonJS and ES module programs of
/// [`crate::smoke`], and type-checks a named import under `tsc --strict`,
/// `module: nodenext`.
pub fn dist_check() -> Result<Outcome> {
    if !has_npm() {
        return Ok(Outcome::Skipped(
            "`npm` not found; it packs and installs the tarball".into(),
        ));
    }
    let tarball = dist(env!("CARGO_PKG_VERSION"))?;
    let input = crate::smoke::input()?;
    let work = crate::smoke::fresh_dir("npm-check")?;
    std::fs::write(
        work.join("package.json"),
        "{ \"name\": \"consumer\", \"version\": \"1.0.0\", \"private\": true }\n",
    )?;
    std::fs::write(work.join("smoke.cjs"), SMOKE_CJS)?;
    std::fs::write(work.join("smoke.mjs"), SMOKE_MJS)?;
    std::fs::write(work.join("check.mts"), SMOKE_MTS)?;
    std::fs::write(work.join("tsconfig.json"), SMOKE_TSCONFIG)?;
    exec(
        Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--cache",
            ])
            .arg(work.join("npm-cache"))
            .arg(&tarball)
            .args(["typescript@5.9.3", "@types/node@20.19.0"])
            .current_dir(&work),
    )
    .map_err(|e| {
        format!(
            "npm install {} in {}: {e}",
            tarball.display(),
            work.display()
        )
    })?;
    for (lang, script, out) in [
        ("node (cjs)", "smoke.cjs", "from-node-cjs.hrry"),
        ("node (esm)", "smoke.mjs", "from-node-esm.hrry"),
    ] {
        let out = work.join(out);
        exec(
            Command::new("node")
                .arg(script)
                .arg(&input)
                .arg(&out)
                .current_dir(&work),
        )
        .map_err(|e| format!("node {script} in {}: {e}", work.display()))?;
        crate::smoke::verify(lang, &input, &out)?;
    }
    exec(
        Command::new("node")
            .args(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"])
            .current_dir(&work),
    )
    .map_err(|e| format!("tsc --strict (module nodenext) in {}: {e}", work.display()))?;
    println!("node: tsc --strict, module nodenext: `import {{ FileReader }} from 'hurray'` checks");
    let _ = std::fs::remove_dir_all(&work);
    Ok(Outcome::Passed)
}

/// The Node stages of `cargo xtask test`, in order.
pub fn stages() -> Vec<Stage> {
    vec![
        node_stage(
            "node: build bindings/node/hurray.node (release), bindings/node/native.d.ts is current",
            || build(true).map(|_| ()),
        ),
        Stage {
            name:
                "node: npm ci, tsc --strict over index.d.ts and native.d.ts (test/types-check.ts, test/esm-check.mts)"
                    .into(),
            run: Box::new(|| {
                match node_major() {
                Some(v) if v >= MIN_NODE => type_check(),
                _ => Ok(Outcome::Skipped(format!(
                    "`node` {MIN_NODE} or newer not found; install it to check bindings/node's types"
                ))),
            }
            }),
        },
        node_stage(
            "node: node --expose-gc --test bindings/node/test",
            node_test,
        ),
        Stage {
            name: "dist: npm tarball (stripped addon, no test support) installs into a fresh npm project; CJS + ESM programs read and write, tsc --strict nodenext".into(),
            run: Box::new(|| match node_major() {
                Some(v) if v >= MIN_NODE => dist_check(),
                _ => Ok(Outcome::Skipped(format!(
                    "`node` {MIN_NODE} or newer not found; install it to check the npm tarball"
                ))),
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct with its impl becomes a class; interfaces and functions render;
    /// test-only functions are left out.
    #[test]
    fn renders_classes_interfaces_and_functions() {
        let lines = r#"{"kind": "struct", "name": "T", "js_doc": "/** A T. */\n", "def": ""}
{"kind": "impl", "name": "T", "js_doc": "", "def": "/** Shape. */\nget shape(): Array<number>\n close(): void"}
{"kind": "interface", "name": "O", "js_doc": "", "def": "a?: number"}
{"kind": "fn", "name": "alloc", "js_doc": "/** Memory. */\n", "def": "function alloc(n: number): ArrayBuffer"}
{"kind": "fn", "name": "debugLiveObjects", "js_doc": "", "def": "function debugLiveObjects(): number"}"#;
        let out = render_types(lines).unwrap();
        assert!(out.contains("/** A T. */\nexport declare class T {\n  /** Shape. */\n  get shape(): Array<number>\n  close(): void\n}\n"), "{out}");
        assert!(
            out.contains("export interface O {\n  a?: number\n}\n"),
            "{out}"
        );
        assert!(
            out.contains("/** Memory. */\nexport declare function alloc(n: number): ArrayBuffer\n"),
            "{out}"
        );
        assert!(!out.contains("debugLiveObjects"), "{out}");
    }

    #[test]
    fn test_support_blocks_are_cut_and_must_exist() {
        let text = "a\n// test-support:begin (why)\nsecret\n// test-support:end\nb\n";
        assert_eq!(strip_test_support(text).unwrap(), "a\nb\n");
        assert!(strip_test_support("a\n").is_err());
        assert!(strip_test_support("// test-support:begin\nx\n").is_err());
        let real = std::fs::read_to_string(package_dir().join("lib/native.js")).unwrap();
        let cut = strip_test_support(&real).unwrap();
        assert!(real.contains("uncheckedFromBuffer") && !cut.contains("uncheckedFromBuffer"));
    }

    /// The published manifest keeps the condition order (import before default), has
    /// no `./testing` export, and lists only packed files.
    #[test]
    fn published_manifest_has_no_testing_export() {
        let repo = std::fs::read_to_string(package_dir().join("package.json")).unwrap();
        let out = published_manifest(&repo, "9.8.7").unwrap();
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(json["version"], "9.8.7");
        assert!(!out.contains("testing"), "{out}");
        assert!(out.find("\"import\"").unwrap() < out.find("\"default\"").unwrap());
        let files = json["files"].as_array().unwrap();
        assert!(files.iter().any(|f| f == "hurray.node"));
        assert!(!files.iter().any(|f| f == "lib/" || f == "lib/testing.js"));
    }

    /// Every module of `lib/` is packed (native.js after its test-support block is
    /// cut), except the test-only `testing.js`: a new module left out of the list
    /// breaks `require('hurray')` from the tarball.
    #[test]
    fn every_lib_module_but_testing_is_packed() {
        for e in std::fs::read_dir(package_dir().join("lib")).unwrap() {
            let name = format!("lib/{}", e.unwrap().file_name().to_string_lossy());
            if name == "lib/testing.js" || name == "lib/native.js" {
                continue;
            }
            assert!(
                PACKED_AS_IS.contains(&name.as_str()),
                "{name} is not packed"
            );
        }
    }

    /// An item kind the renderer does not know fails loudly instead of vanishing.
    #[test]
    fn unknown_kinds_fail() {
        let err = render_types(r#"{"kind": "enum", "name": "E", "js_doc": "", "def": "A = 0"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"enum\""), "{err}");
    }
}
