//! `nbg coefficients` on the A733 board files (`../shared/corpus/v2`, else the copies under
//! `controls/public/v2`): every NN coefficient buffer cut into its header, per-core streams and
//! biases, the header re-encoded to its stored bytes; a buffer that cannot be cut is refused
//! with its code and offset, never a panic.

use super::common;
use serde_json::Value;

fn coefficients(path: &str) -> (Option<i32>, Value) {
    let o = common::nbg(&common::root(), &["coefficients", path, "--json"]);
    let doc = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{path}: {e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    (o.status.code(), doc)
}

#[test]
fn every_board_file_is_cut_or_refused_with_a_code() {
    let (dir, names) = common::public_v2_paths();
    for name in names {
        let path = dir.join(&name).display().to_string();
        let (code, doc) = coefficients(&path);
        let buffers = doc["buffers"].as_array().unwrap();
        let refused = doc["refused"].as_array().unwrap();
        assert!(!buffers.is_empty(), "{name}: no coefficient buffer cut");
        assert_eq!(code, Some(if refused.is_empty() { 0 } else { 1 }), "{name}");
        for b in buffers {
            assert_eq!(b["header_reencoded"], true, "{name}: {b}");
            let size = b["size"].as_u64().unwrap();
            let streams: u64 = b["streams"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["bytes"].as_u64().unwrap())
                .sum();
            assert!(64 + streams <= size, "{name}: entry {}", b["entry"]);
        }
        for r in refused {
            let code = r["error"]["code"].as_str().unwrap();
            assert!(code.starts_with("coef-"), "{name}: {r}");
        }
    }
}

#[test]
fn the_face_detector_cuts_whole_with_48_bit_biases() {
    let (dir, names) = common::public_v2_paths();
    let Some(name) = names.iter().find(|n| n.contains("face_detector")) else {
        common::skip("the A733 face detector");
        return;
    };
    let (code, doc) = coefficients(&dir.join(name).display().to_string());
    assert_eq!(code, Some(0));
    let buffers = doc["buffers"].as_array().unwrap();
    assert!(doc["refused"].as_array().unwrap().is_empty());
    for b in buffers {
        assert_eq!(b["header"]["bit16"], true);
        let channels = b["command"]["output_channels"].as_u64().unwrap();
        let biases = &b["biases"];
        assert_eq!(biases["width"], 6, "entry {}", b["entry"]);
        assert_eq!(biases["values"].as_array().unwrap().len() as u64, channels);
        assert_eq!(biases["tail_zero"], true);
        for s in b["streams"].as_array().unwrap() {
            assert_eq!(s["padding_zero"], true);
            assert!(
                s["not_decoded"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("16-bit")
            );
        }
    }
    // The first conv2d's first bias (source 0.08844, fp16) as stored: x 2^30, within 4 %.
    let first = buffers[0]["biases"]["values"][0].as_i64().unwrap() as f64 / f64::from(1u32 << 30);
    assert!((first - 0.08844).abs() < 0.004, "{first}");
}
