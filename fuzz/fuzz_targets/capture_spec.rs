//! A capture directory whose `differential.json` is arbitrary bytes, beside three real
//! controls: loading never panics, and a spec it accepts replays without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let dir = DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let controls = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../differentials/dynaio-constant"
        );
        for name in ["A1.nb", "A2.nb", "B.nb"] {
            std::fs::copy(format!("{controls}/{name}"), d.path().join(name)).unwrap();
        }
        d
    });
    std::fs::write(dir.path().join("differential.json"), data).unwrap();
    if let Ok(set) = nbg_lab::lab::differential::load(dir.path()) {
        let _ = nbg_lab::lab::differential::run(&set);
    }
});
