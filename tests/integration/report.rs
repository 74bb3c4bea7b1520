//! `nbg report`: the committed reports rebuild byte for byte from the CLI, render in headless
//! Chromium without a JavaScript error or a blank screenshot, and show the values the JSON
//! commands print; outputs are refused, replaced and written as documented.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn json_of(args: &[&str]) -> Value {
    let out = common::nbg_command(&common::root())
        .args(args)
        .output()
        .expect("nbg runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("nbg {args:?}: {e}"))
}

/// Debian's chromium, or a skip (a failure under CI=true).
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from("/usr/bin/chromium");
    if path.is_file() {
        return Some(path);
    }
    common::skip("chromium not installed (.ci/setup installs Debian's chromium)");
    None
}

struct Rendered {
    dom: String,
    png: Vec<u8>,
}

/// Open `file#fragment` headless twice: once for the DOM after the scripts ran, once for a
/// screenshot. Any console message (errors, uncaught exceptions, CSP violations) fails.
fn render(chrome: &Path, file: &Path, fragment: &str) -> Rendered {
    render_sized(chrome, file, fragment, 1400)
}

/// `render` with a screenshot `height` pixels tall (1280 wide).
fn render_sized(chrome: &Path, file: &Path, fragment: &str, height: u32) -> Rendered {
    let url = format!(
        "file://{}{fragment}",
        file.canonicalize().expect("report path").display()
    );
    let run = |extra: &[&str]| -> (String, String) {
        let profile = tempfile::tempdir().expect("profile dir");
        let out = Command::new("timeout")
            .arg("120")
            .arg(chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "chromium failed on {url}: {stderr}");
        if let Some(line) = stderr.lines().find(|l| l.contains(":CONSOLE")) {
            panic!("console output on {url}: {line}");
        }
        assert!(!stderr.contains("Uncaught"), "{url}: {stderr}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
    };
    let (dom, _) = run(&["--dump-dom"]);
    let shots = tempfile::tempdir().expect("screenshot dir");
    let shot = shots.path().join("shot.png");
    run(&[
        &format!("--window-size=1280,{height}"),
        &format!("--screenshot={}", shot.display()),
    ]);
    let png = std::fs::read(&shot).expect("screenshot written");
    if let Ok(dir) = std::env::var("NBG_REPORT_SCREENSHOTS") {
        let stem = file.file_stem().unwrap().to_string_lossy();
        let tag = fragment.trim_start_matches('#').replace(['=', '&'], "-");
        let name = if tag.is_empty() {
            format!("{stem}.png")
        } else {
            format!("{stem}-{tag}.png")
        };
        std::fs::write(Path::new(&dir).join(name), &png).expect("copy screenshot");
    }
    assert!(
        dom.contains(r#"data-status="ready""#),
        "the page script did not finish on {url}"
    );
    let errors = between(&dom, r#"<div id="js-errors""#, "</div>");
    assert!(
        errors.ends_with('>') && errors.contains("hidden"),
        "JavaScript errors on {url}: {errors}"
    );
    Rendered { dom, png }
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> &'a str {
    let i = s
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in page"));
    let rest = &s[i + start.len()..];
    &rest[..rest.find(end).expect("closing tag")]
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The summary card value `<dd data-key=KEY>`.
fn summary(dom: &str, key: &str) -> String {
    unescape(between(dom, &format!(r#"<dd data-key="{key}">"#), "</dd>"))
}

fn attr_values(dom: &str, prefix: &str, attr: &str) -> Vec<String> {
    dom.match_indices(prefix)
        .map(|(i, _)| {
            let tag = &dom[i..i + dom[i..].find('>').expect("tag ends")];
            let key = format!(r#"{attr}=""#);
            let j = tag.find(&key).expect("attribute present") + key.len();
            unescape(&tag[j..j + tag[j..].find('"').expect("quote")])
        })
        .collect()
}

/// Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) into RGBA pixels.
fn decode_png(png: &[u8]) -> (usize, usize, Vec<[u8; 4]>) {
    use std::io::Read;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut w, mut h, mut channels) = (0usize, 0usize, 0usize);
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "bit depth");
                assert_eq!(data[12], 0, "interlace");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("colour type {t}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("PNG data inflates");
    let stride = w * channels;
    assert_eq!(raw.len(), h * (stride + 1), "PNG data length");
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h {
        let filter = raw[y * (stride + 1)];
        let mut line = raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)].to_vec();
        for i in 0..stride {
            let a = if i >= channels { line[i - channels] } else { 0 } as i16;
            let b = prev[i] as i16;
            let c = if i >= channels { prev[i - channels] } else { 0 } as i16;
            let add = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("filter {f}"),
            };
            line[i] = line[i].wrapping_add(add as u8);
        }
        for px in line.chunks(channels) {
            pixels.push([px[0], px[1], px[2], if channels == 4 { px[3] } else { 255 }]);
        }
        prev = line;
    }
    (w, h, pixels)
}

/// Not blank: a real share of non-white pixels and, where given, the colours the page draws.
fn assert_painted(png: &[u8], what: &str, colours: &[[u8; 3]]) {
    let (w, h, pixels) = decode_png(png);
    assert!(w >= 1000 && h >= 1000, "{what}: screenshot {w}x{h}");
    let ink = pixels
        .iter()
        .filter(|p| p[0] < 240 || p[1] < 240 || p[2] < 240)
        .count();
    assert!(
        ink * 20 > pixels.len(),
        "{what}: blank screenshot ({ink} of {} pixels not white)",
        pixels.len()
    );
    for c in colours {
        let n = pixels.iter().filter(|p| p[..3] == c[..]).count();
        assert!(n > 500, "{what}: colour {c:02x?} drawn on {n} pixels only");
    }
}

const DECODED_BLUE: [u8; 3] = [0x00, 0x72, 0xb2];
const OPAQUE_GREEN: [u8; 3] = [0x00, 0x9e, 0x73];

fn committed(path: &str) -> PathBuf {
    common::root().join(path)
}

/// The CLI writes every committed report byte for byte (so does `verify-generated`).
#[test]
fn cli_rebuilds_every_committed_report() {
    let dir = tempfile::tempdir().unwrap();
    for (path, request) in nbg_lab::evidence::committed_reports() {
        let out = dir.path().join("r.html");
        let _ = std::fs::remove_file(&out);
        let mut cmd = common::nbg_command(&common::root());
        match request {
            nbg_lab::report::Request::Graph { file, sweep, .. } => {
                cmd.arg("report").arg(file);
                if sweep {
                    cmd.arg("--sweep");
                }
            }
            nbg_lab::report::Request::Pair { a, b } => {
                cmd.arg("report").arg(a).arg(b);
            }
            nbg_lab::report::Request::Capture { dir } => {
                cmd.arg("report").arg("--differential").arg(dir);
            }
        }
        let status = cmd.arg("-o").arg(&out).status().unwrap();
        assert!(status.success(), "{path}");
        let written = std::fs::read(&out).unwrap();
        assert_eq!(
            written,
            std::fs::read(committed(path)).expect("committed report"),
            "{path} differs from the CLI's output; run nbg verify-generated --write"
        );
        let text = String::from_utf8(written).unwrap();
        for forbidden in ["http://", "https://", "@import", "url(", " src=\""] {
            assert!(!text.contains(forbidden), "{path} references {forbidden}");
        }
    }
}

#[test]
fn single_graph_reports_render_with_the_json_values() {
    let Some(chrome) = chromium() else { return };
    for (path, file) in [
        ("evidence/reports/erf-u8.html", "controls/erf-u8.nb"),
        (
            "evidence/reports/timvx-conv2d_relu_maxpool2d_fp32-001e.html",
            "controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb",
        ),
    ] {
        let parsed = json_of(&["parse", file, "--json"]);
        let image = json_of(&["image", file, "--json"]);
        let sweep = json_of(&["sweep", file, "--json"]);
        let page = render(&chrome, &committed(path), "");
        let dom = &page.dom;
        assert_eq!(summary(dom, "family"), parsed["format"].as_str().unwrap());
        assert_eq!(summary(dom, "size"), parsed["file"]["size"].to_string());
        assert_eq!(
            summary(dom, "sha256"),
            parsed["file"]["sha256"].as_str().unwrap()
        );
        assert_eq!(
            summary(dom, "structural-signature"),
            parsed["structural_signature"].as_str().unwrap()
        );
        assert_eq!(
            summary(dom, "version"),
            format!("0x{:08x}", parsed["header"]["version"].as_u64().unwrap())
        );
        let crc = if parsed["format"] == "nbg-v2" {
            if parsed["file_checksum"]["matches"] == true {
                "matches"
            } else {
                "mismatch"
            }
        } else {
            parsed["crc"]["classification"].as_str().unwrap()
        };
        assert_eq!(summary(dom, "crc-status"), crc);
        // The owner table is the ledger, row for row.
        let owners = image["owners"].as_array().unwrap();
        let starts = attr_values(dom, "<tr data-owner=", "data-start");
        let labels: Vec<String> = owners
            .iter()
            .map(|o| o["start"].to_string())
            .collect::<Vec<_>>();
        assert_eq!(starts, labels, "{path}: owner rows");
        assert_eq!(
            attr_values(dom, "<tr data-owner=", "data-class"),
            owners
                .iter()
                .map(|o| o["class"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        );
        for key in ["detected", "tolerated", "undetected"] {
            let v = between(dom, &format!(r#"<dd data-key="{key}">"#), "</dd>");
            assert_eq!(v, sweep[key].to_string(), "{path}: sweep {key}");
        }
        let painted: u64 = attr_values(dom, "<canvas id=\"map\"", "data-painted")[0]
            .parse()
            .unwrap();
        assert!(painted > 100_000, "{path}: map painted on {painted} pixels");
        assert_painted(&page.png, path, &[DECODED_BLUE, OPAQUE_GREEN]);
    }
}

#[test]
fn byte_map_zooms_to_single_bytes_and_opens_the_hex_view_with_fields() {
    let Some(chrome) = chromium() else { return };
    // The first input record of erf-u8: dimension_count at 0x354.
    let page = render(
        &chrome,
        &committed("evidence/reports/erf-u8.html"),
        "#offset=0x354",
    );
    let panel = between(&page.dom, r#"<div class="hexpanel" id="hexpanel""#, "</ul>");
    assert!(
        panel.contains(r#"data-owner="3""#),
        "hex view of owner 3: {panel}"
    );
    assert!(panel.contains("NBG_SECTION_INPUT[0].dimension_count = 1 = 0x1 (u32)"));
    // Word arrays are shown element by element, named from the field map.
    assert!(panel.contains("NBG_SECTION_INPUT[0].dimensions[0] = 481 = 0x1e1 (u32)"));
    assert!(panel.contains("NBG_SECTION_INPUT[0].dimensions[5] = 0 = 0x0 (u32)"));
    assert!(panel.contains(r#"NBG_SECTION_INPUT[0].name = &quot;input_0&quot;"#));
    assert!(page.dom.contains("at 16 bytes per row"), "single-byte zoom");
    assert!(page.dom.contains(r#"<tr data-owner="3" data-start="852" data-end="964" data-class="decoded-record" class="sel">"#));
    assert_painted(&page.png, "erf-u8 hex view", &[DECODED_BLUE]);
    // The protection map layer draws with the sweep's colours.
    let page = render(
        &chrome,
        &committed("evidence/reports/erf-u8.html"),
        "#sweep",
    );
    let sweep = json_of(&["sweep", "controls/erf-u8.nb", "--json"]);
    for key in ["detected", "tolerated", "undetected"] {
        let legend = format!("{key}: {} bytes", sweep[key]);
        assert!(page.dom.contains(&legend), "sweep legend {legend}");
    }
    assert_painted(&page.png, "erf-u8 sweep", &[DECODED_BLUE]);
}

#[test]
fn diff_report_renders_the_diff_rows() {
    let Some(chrome) = chromium() else { return };
    let json = json_of(&[
        "diff",
        "controls/erf-u8.nb",
        "controls/ctc-like.nb",
        "--json",
    ]);
    // Tall enough that the A/B panel, kept in view at the bottom, is in the screenshot.
    let page = render_sized(
        &chrome,
        &committed("evidence/reports/diff-erf-u8-ctc-like.html"),
        "#row=47",
        2200,
    );
    let dom = &page.dom;
    assert_eq!(
        summary(dom, "changed-bytes"),
        json["changed_bytes"].to_string()
    );
    assert_eq!(
        summary(dom, "a-bytes-differing"),
        json["a_bytes_differing"].to_string()
    );
    assert_eq!(
        summary(dom, "owners-changed"),
        json["owners_changed"].to_string()
    );
    assert_eq!(
        summary(dom, "a-sha256"),
        json["a"]["sha256"].as_str().unwrap()
    );
    assert_eq!(
        summary(dom, "b-sha256"),
        json["b"]["sha256"].as_str().unwrap()
    );
    let expected: Vec<String> = json["owners"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["ranges"].as_array().unwrap().iter())
        .map(|c| c["field"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        attr_values(dom, r#"<tr class="change"#, "data-field"),
        expected
    );
    assert!(
        dom.contains("NBG_SECTION_INPUT[0].dimensions[1]: 0 = 0x0 (u32) -&gt; 16 = 0x10 (u32)")
    );
    // Row 47 opened: A and B side by side.
    let panel = between(
        dom,
        r#"<div class="hexpanel" id="hexpanel" data-row="47">"#,
        "</p>",
    );
    let c = &json["owners"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["ranges"].as_array().unwrap().iter())
        .nth(47)
        .unwrap()
        .clone();
    for side in ["a", "b"] {
        let title = format!(
            "<h3>{} [0x{:x}, 0x{:x})</h3>",
            side.to_uppercase(),
            c[format!("{side}_start")].as_u64().unwrap(),
            c[format!("{side}_end")].as_u64().unwrap()
        );
        assert!(panel.contains(&title), "{title} in {panel}");
    }
    assert_eq!(panel.matches("<h3>").count(), 3, "title, A and B");
    assert!(panel.contains(r#"class="b chg""#));
    assert_painted(&page.png, "diff", &[]);
}

#[test]
fn capture_report_renders_the_differential() {
    let Some(chrome) = chromium() else { return };
    let json = json_of(&["differential", "differentials/dynaio-constant", "--json"]);
    let page = render(
        &chrome,
        &committed("evidence/reports/capture-dynaio-constant.html"),
        "",
    );
    let dom = &page.dom;
    let replay = &json["replay"];
    assert_eq!(summary(dom, "result"), json["result"].as_str().unwrap());
    assert_eq!(
        summary(dom, "a1-equals-a2"),
        json["a1_equals_a2"].to_string()
    );
    assert_eq!(
        summary(dom, "recorded-crc32"),
        format!("0x{:08x}", replay["recorded_crc32"].as_u64().unwrap())
    );
    assert_eq!(
        summary(dom, "recomputed-crc32"),
        format!("0x{:08x}", replay["recomputed_crc32"].as_u64().unwrap())
    );
    assert_eq!(
        summary(dom, "replay-sha256"),
        replay["sha256"].as_str().unwrap()
    );
    assert_eq!(
        summary(dom, "b-sha256"),
        replay["b_sha256"].as_str().unwrap()
    );
    let evidence = unescape(between(dom, r#"<pre id="evidence">"#, "</pre>"));
    assert_eq!(
        serde_json::from_str::<Value>(&evidence).unwrap(),
        json,
        "embedded evidence equals nbg differential --json"
    );
    assert_eq!(dom.matches(r#"<span class="badge pass">"#).count(), 5);
    assert_painted(&page.png, "capture", &[]);
}

#[test]
fn outputs_are_refused_replaced_and_written_as_documented() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let run = |extra: &[&str], out: &Path| {
        common::nbg_command(&common::root())
            .args(["report", "controls/erf-u8.nb"])
            .args(extra)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap()
    };
    assert_eq!(run(&[], &out).status.code(), Some(0));
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let first = std::fs::read(&out).unwrap();
    // Exists: refused without --force, replaced with it, byte-identical.
    let again = run(&[], &out);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert_eq!(run(&["--force"], &out).status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), first, "deterministic");
    // An input is never an output, with --force or through another name.
    let input = dir.path().join("in.nb");
    std::fs::copy(common::root().join("controls/erf-u8.nb"), &input).unwrap();
    let alias = dir.path().join("alias.nb");
    std::fs::hard_link(&input, &alias).unwrap();
    let r = common::nbg_command(&common::root())
        .arg("report")
        .arg(&input)
        .args(["--force", "-o"])
        .arg(&alias)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert_eq!(std::fs::read(&input).unwrap(), common::control("erf-u8.nb"));
    // Not a regular file.
    let r = run(&["--force"], dir.path());
    assert_eq!(r.status.code(), Some(2));
    // An invalid NBG: exit 1, nothing written, no partial file left.
    let bad = dir.path().join("bad.nb");
    std::fs::write(&bad, b"not an nbg").unwrap();
    let target = dir.path().join("bad.html");
    let r = common::nbg_command(&common::root())
        .arg("report")
        .arg(&bad)
        .arg("-o")
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(!target.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".nbg-partial"))
        .collect();
    assert!(leftovers.is_empty());
    // Usage.
    let r = common::nbg_command(&common::root())
        .args([
            "report",
            "controls/erf-u8.nb",
            "controls/ctc-like.nb",
            "--sweep",
            "-o",
        ])
        .arg(dir.path().join("x.html"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    // Different families cannot be diffed.
    let r = common::nbg_command(&common::root())
        .args(["report", "controls/erf-u8.nb"])
        .arg("controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb")
        .arg("-o")
        .arg(dir.path().join("y.html"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
}

/// `#keys` makes the page press keys on the map (or the heat strip) and click its buttons, then
/// record what did not respond; the test reads that record back.
#[test]
fn maps_and_strips_work_with_the_keyboard() {
    let Some(chrome) = chromium() else { return };
    for (path, element) in [
        ("evidence/reports/erf-u8.html", r#"<canvas id="map""#),
        (
            "evidence/reports/timvx-conv2d_relu_maxpool2d_fp32-001e.html",
            r#"<canvas id="map""#,
        ),
        (
            "evidence/reports/diff-erf-u8-ctc-like.html",
            r#"<canvas id="heat-a""#,
        ),
    ] {
        let page = render(&chrome, &committed(path), "#keys");
        let record = attr_values(&page.dom, element, "data-keys");
        assert_eq!(record, vec!["ok".to_string()], "{path}");
    }
}

/// A vendor sweep's cells (a document in the `nbg sweep --vendor --json` form, built here so no
/// driver is needed) become the byte map's layer: its legend, the keyboard checks, its tables.
#[test]
fn a_vendor_sweep_is_a_layer_of_the_byte_map() {
    let Some(chrome) = chromium() else { return };
    let file = common::root().join("controls/erf-u8.nb");
    let bytes = std::fs::read(&file).unwrap();
    let n = bytes.len() as u64;
    let cells = nbg_lab::lab::sweep::VENDOR_CELLS;
    // Six runs, one per cell, over the file.
    let runs: Vec<serde_json::Value> = (0..6u64)
        .map(|i| serde_json::json!([n * i / 6, n * (i + 1) / 6, cells[i as usize]]))
        .collect();
    let doc = serde_json::json!({
        "schema": "nbg-vendor-sweep/1",
        "sha256": nbg_lab::digest::Hash256::of(&bytes).hex(),
        "bytes": n, "stride": 1, "mutations": n * 3, "patterns": [1, 128, 255],
        "config": {"name": "VIP9000NANOS_PID0X1000000E", "pid": 268435470u32},
        "baseline": {"verdict": "accepted"},
        "by_class": {"decoded-record": {"both_refuse": 1, "only_nbg_refuses": 2, "only_loader_refuses": 0,
                     "both_accept": 3, "loader_crashed": 4, "loader_hung": 0}},
        "total": {"both_refuse": 1, "only_nbg_refuses": 2, "only_loader_refuses": 0,
                  "both_accept": 3, "loader_crashed": 4, "loader_hung": 0},
        "findings": [{"offset": 64, "pattern": 1, "class": "decoded-record", "field": "directory[0](NBG_SECTION_INPUT).offset",
                      "nbg": {"verdict": "refused", "code": "section-out-of-bounds"},
                      "loader": {"verdict": "crashed", "signal": 11, "name": "SIGSEGV"}}],
        "runs": runs,
    });
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    std::fs::write(&sweep, doc.to_string()).unwrap();
    let out = dir.path().join("r.html");
    let o = common::nbg_command(&common::root())
        .arg("report")
        .arg(&file)
        .arg("--vendor-sweep")
        .arg(&sweep)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = render(&chrome, &out, "#keys");
    assert_eq!(
        attr_values(&page.dom, r#"<canvas id="map""#, "data-keys"),
        vec!["ok".to_string()]
    );
    let shown = render(&chrome, &out, "#sweep");
    for c in cells {
        assert!(shown.dom.contains(&format!("{c}: ")), "{c}");
    }
    assert!(shown.dom.contains("directory[0](NBG_SECTION_INPUT).offset"));
    // The baseline verdict is its name, not a quoted JSON string.
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("the unmutated file: accepted.")
    );
    // A document of another schema is refused before anything is written.
    let mut other = doc.clone();
    other["schema"] = serde_json::json!("nbg-vendor-sweep/0");
    std::fs::write(&sweep, other.to_string()).unwrap();
    let out0 = dir.path().join("r0.html");
    let o = common::nbg_command(&common::root())
        .args(["report", file.to_str().unwrap(), "--vendor-sweep"])
        .arg(&sweep)
        .arg("-o")
        .arg(&out0)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an nbg-vendor-sweep/1 document"));
    assert!(!out0.exists());
    // A run past the file's end is refused before anything is written.
    let mut bad = doc.clone();
    bad["runs"][5][1] = serde_json::json!(n + 1);
    std::fs::write(&sweep, bad.to_string()).unwrap();
    let out2 = dir.path().join("r2.html");
    let o = common::nbg_command(&common::root())
        .arg("report")
        .arg(&file)
        .arg("--vendor-sweep")
        .arg(&sweep)
        .arg("-o")
        .arg(&out2)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!out2.exists());
}

/// `nbg report A B` with a B that does not parse (issue 68): the page is written, says why B
/// fails, and lists B's changed bytes by A's owners and fields, as `nbg diff` does; its
/// script runs without errors.
#[test]
fn a_damaged_b_gets_a_report_through_a() {
    let a = common::control("erf-u8.nb");
    let mut b = a.clone();
    b[0x20] ^= 0xff; // the sub-header count, which the parser checks
    let failure = nbg_lab::parse(&b).expect_err("B is damaged");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.nb"), &a).unwrap();
    std::fs::write(tmp.path().join("b.nb"), &b).unwrap();
    let o = common::nbg(tmp.path(), &["report", "a.nb", "b.nb", "-o", "pair.html"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(tmp.path().join("pair.html")).unwrap();
    assert!(html.contains("B does not parse"));
    assert!(
        html.contains(failure.code.as_str()),
        "the failure code is named"
    );
    assert!(html.contains("damaged-fields"));
    let Some(chrome) = chromium() else { return };
    let page = render(&chrome, &tmp.path().join("pair.html"), "");
    assert_eq!(summary(&page.dom, "changed-bytes"), "1");
    assert!(summary(&page.dom, "b-failure").starts_with(failure.code.as_str()));
}
