//! Shared test helpers: the committed controls and the builder's layouts.

use std::io::Write as _;
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn control(name: &str) -> Vec<u8> {
    std::fs::read(root().join("controls").join(name)).expect("committed control")
}

/// Control file names from `controls/controls.json`.
pub fn control_names() -> Vec<String> {
    manifest()["controls"]
        .as_array()
        .expect("controls array")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect()
}

pub fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("controls/controls.json")).expect("manifest");
    serde_json::from_str(&text).expect("manifest JSON")
}

pub fn le32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

pub fn put32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The public corpus beside the project (`../shared/corpus`), when present. A developer's clone
/// may not have it: the test then prints one visible `skipped:` line and returns `None`. Under
/// `CI=true` (where it is always provided) its absence is a failure, never a skip.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = root().join("../shared/corpus");
    if dir.join("corpus.json").is_file() {
        return Some(dir);
    }
    skip(&format!(
        "../shared/corpus not present (expected {} beside the project)",
        dir.display()
    ));
    None
}

/// The vendor's reader `nbinfo` beside the project, or `None` after `skip` says so.
pub fn nbinfo() -> Option<PathBuf> {
    let p = root().join("../shared/peers/nbinfo/nbinfo");
    if p.is_file() {
        return Some(p);
    }
    skip(&format!("the vendor reader {} is missing", p.display()));
    None
}

/// The public v2 board files' folder and names, pinned: every file of `../shared/corpus/v2`
/// when it is there (the corpus grows), else the ones the repository carries under
/// `controls/public/v2` (its absence is a visible skip, and a failure under `CI=true`).
pub fn public_v2_paths() -> (PathBuf, Vec<String>) {
    let shared = root().join("../shared/corpus/v2");
    let dir = if shared.join("corpus.json").is_file() {
        shared
    } else {
        skip("../shared/corpus/v2 not present: the board files controls/public/v2 carries");
        root().join("controls/public/v2")
    };
    let names = pinned_files_in(&dir, &dir)
        .into_iter()
        .map(|(name, _, _)| name)
        .collect();
    (dir, names)
}

/// The public files' folder and names: every file of `../shared/corpus` when it is there (the
/// corpus grows), else the ones the repository carries under `controls/public/v1`.
pub fn public_paths() -> (PathBuf, Vec<String>) {
    match corpus_files() {
        Some(files) => (
            root().join("../shared/corpus/v1"),
            files.into_iter().map(|(name, _, _)| name).collect(),
        ),
        None => (
            root().join("controls/public/v1"),
            public_controls()
                .into_iter()
                .map(|(name, _, _)| name)
                .collect(),
        ),
    }
}

/// A component a test needs is missing: under `CI=true` (where everything is installed) that is
/// a failure; otherwise one `skipped:` line on stderr, where it is seen (the harness captures
/// `println!`), naming the test.
pub fn skip(what: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true: {what}"
    );
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {what} ({})",
        std::thread::current().name().unwrap_or("test")
    );
}

/// `(file name, bytes, pinned entry)` for every file of a `nbg-public-corpus/1` config, with the
/// pinned size and SHA-256 checked. The count is the config's own (the corpus grows): every
/// listed file must be there, and every `.nb` file in `v1/` must be listed.
fn pinned_files(dir: &Path) -> Vec<(String, Vec<u8>, serde_json::Value)> {
    pinned_files_in(dir, &dir.join("v1"))
}

/// `pinned_files` for a config whose files lie in `files` (a family folder holds its own).
fn pinned_files_in(dir: &Path, files_dir: &Path) -> Vec<(String, Vec<u8>, serde_json::Value)> {
    let text = std::fs::read_to_string(dir.join("corpus.json")).expect("corpus.json");
    let config: serde_json::Value = serde_json::from_str(&text).expect("corpus.json is JSON");
    assert_eq!(config["schema"], "nbg-public-corpus/1");
    let files = config["files"].as_array().expect("files");
    assert!(!files.is_empty(), "{} lists no file", dir.display());
    let listed: std::collections::BTreeSet<&str> = files
        .iter()
        .map(|f| f["file"].as_str().expect("file"))
        .collect();
    let present: std::collections::BTreeSet<String> = std::fs::read_dir(files_dir)
        .expect("the corpus folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".nb"))
        .collect();
    let unlisted: Vec<&String> = present
        .iter()
        .filter(|n| !listed.contains(n.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "{} holds unlisted files {unlisted:?}",
        dir.display()
    );
    files
        .iter()
        .map(|f| {
            let name = f["file"].as_str().expect("file").to_string();
            let bytes = std::fs::read(files_dir.join(&name)).expect("corpus file");
            assert_eq!(
                bytes.len() as u64,
                f["size"].as_u64().unwrap(),
                "{name} size"
            );
            assert_eq!(
                nbg_lab::digest::Hash256::of(&bytes).hex(),
                f["sha256"].as_str().unwrap(),
                "{name} sha256"
            );
            (name, bytes, f.clone())
        })
        .collect()
}

/// Every file `../shared/corpus/corpus.json` lists, or `None` (with a visible skip) where the
/// corpus is absent.
pub fn corpus_files() -> Option<Vec<(String, Vec<u8>, serde_json::Value)>> {
    corpus_dir().map(|dir| pinned_files(&dir))
}

/// The redistributable public files the repository carries (`controls/public`).
pub fn public_controls() -> Vec<(String, Vec<u8>, serde_json::Value)> {
    pinned_files(&root().join("controls/public"))
}

/// One public file by name, from the repository's controls: always present.
pub fn public_control(name: &str) -> Vec<u8> {
    std::fs::read(root().join("controls/public/v1").join(name)).expect("committed public control")
}

/// Compare `actual`, pretty-printed, with its committed snapshot file; `UPDATE_EXPECT=1` rewrites
/// the file instead.
pub fn snapshot(file: expect_test::ExpectFile, actual: &serde_json::Value) {
    let text = serde_json::to_string_pretty(actual).expect("a JSON value prints") + "\n";
    file.assert_eq(&text);
}

/// Compare a per-file map with its committed snapshot without pinning the corpus: the
/// committed entries are compared (a committed file that vanished or changed fails), and a
/// file the snapshot does not hold yet (a corpus that grew) must have the committed entries'
/// shape, every key they have and no other (a parse that failed or lost a field fails); it
/// is named on stderr and added with `UPDATE_EXPECT=1`, the one way to bless.
pub fn snapshot_per_file(
    file: expect_test::ExpectFile,
    path: &str,
    mut actual: serde_json::Map<String, serde_json::Value>,
) {
    if std::env::var_os("UPDATE_EXPECT").is_none() {
        let committed: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join("tests/snapshots").join(path))
                .expect("committed snapshot"),
        )
        .expect("snapshot JSON");
        let keys = committed
            .as_object()
            .expect("a per-file snapshot is an object");
        let shape = |v: &serde_json::Value| -> Vec<String> {
            v.as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        let committed_shape = keys.values().next().map(shape);
        let new: Vec<String> = actual
            .keys()
            .filter(|k| !keys.contains_key(*k))
            .cloned()
            .collect();
        for k in &new {
            let entry = actual.remove(k).unwrap_or_default();
            if let Some(want) = &committed_shape {
                assert_eq!(
                    &shape(&entry),
                    want,
                    "{k}: not the shape of the entries of tests/snapshots/{path}"
                );
            }
            let _ = writeln!(
                std::io::stderr(),
                "note: {k} is not in tests/snapshots/{path} yet (its shape checked; UPDATE_EXPECT=1 adds it)"
            );
        }
    }
    snapshot(file, &serde_json::Value::Object(actual));
}

/// The committed snapshot `tests/snapshots/NAME`, by absolute path (expect-test would otherwise
/// guess the workspace root from the directories above the clone).
macro_rules! snapshot_file {
    ($name:literal) => {
        expect_test::expect_file![concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/snapshots/",
            $name
        )]
    };
}
pub(crate) use snapshot_file;

/// Compare rebuilt evidence with the committed files; `UPDATE_EXPECT=1` (the one way tests
/// bless what they compare) writes them, as `nbg verify-generated --write` does.
pub fn check_generated(generated: Vec<nbg_lab::evidence::Generated>) {
    let root = root();
    for g in generated {
        let path = root.join(&g.path);
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &g.text).unwrap();
        }
        let committed =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", g.path));
        assert!(committed == g.text, "{} differs from its rebuild", g.path);
    }
}

/// `NAME.onnx valid` or `NAME.onnx invalid` per model in `dir`, as the `onnx` package judges it:
/// `check` is Python run on the loaded model `m` (`.ci/setup` installs the package).
#[cfg(feature = "onnx")]
pub fn onnx_verdicts(dir: &Path, check: &str) -> String {
    let script = format!(
        "import onnx, sys, os, glob\nfrom onnx import shape_inference\nfor p in sorted(glob.glob(os.path.join(sys.argv[1], '*.onnx'))):\n    try:\n        m = onnx.load(p); {check}; print(os.path.basename(p), 'valid')\n    except Exception as e:\n        print(os.path.basename(p), 'invalid')\n"
    );
    let o = std::process::Command::new("python3")
        .args(["-c", &script])
        .arg(dir)
        .output()
        .expect("python3");
    assert!(
        o.status.success(),
        "python onnx (.ci/setup installs it): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Run the built `nbg` with `args` in `dir`.
pub fn nbg(dir: &Path, args: &[&str]) -> std::process::Output {
    nbg_command(dir).args(args).output().expect("nbg runs")
}

/// The `nbg` binary as a command run in `dir`, for a test that sets more than its arguments
/// (standard input, the environment); `nbg` is this with the arguments and the output.
pub fn nbg_command(dir: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"));
    c.current_dir(dir);
    c
}

/// The installed vendor driver, or `None` with a visible `skipped:` line naming the test (a
/// failure under `CI=true`).
#[cfg(feature = "onnx")]
pub fn vendor_driver() -> Option<nbg_lab::simulator::Sdk> {
    match nbg_lab::simulator::sdk::locate() {
        Ok(s) => Some(s),
        Err(e) => {
            skip(&format!("the vendor driver is missing: {e}"));
            None
        }
    }
}

/// A run's stdout as JSON, or a panic showing both streams.
pub fn stdout_json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Write the header CRC of a 0x00020000 file the way its producer does (sections in directory
/// order, the section-40 values read as zero), so a changed record is judged by its own rules.
pub fn reseal_v2(b: &mut [u8]) {
    let count = le32(b, 0x38) as usize;
    let sections: Vec<(u32, u64, u64, u32)> = (0..count)
        .map(|i| {
            let at = 0x3c + 44 * i;
            let (kind, offset, size) = (le32(b, at), le32(b, at + 4), le32(b, at + 12));
            let (o, n) = (offset as usize, size as usize);
            (
                kind,
                offset.into(),
                size.into(),
                crc32fast::hash(&b[o..o + n]),
            )
        })
        .collect();
    let crc = nbg_lab::nbg::crc_rules::v2_file_crc(b, &sections);
    put32(b, 0xc, crc);
}
