//! Corpus-config parsing on arbitrary bytes, in a folder with a real file, a subfolder and a
//! symlink: never a panic, and every accepted entry is a regular file inside the folder.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let dir = DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.nb"), b"VPMN").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/b.nb"), b"VPMN").unwrap();
        std::os::unix::fs::symlink(d.path().join("a.nb"), d.path().join("link.nb")).unwrap();
        d
    });
    let config = dir.path().join("corpus.json");
    if let Ok(corpus) = nbg_lab::lab::corpus::from_bytes(data, &config) {
        for e in &corpus.entries {
            assert!(e.full_path.starts_with(dir.path()));
            let meta = std::fs::symlink_metadata(&e.full_path).unwrap();
            assert!(meta.is_file() && !meta.file_type().is_symlink());
        }
    }
});
