#!/usr/bin/env python3
"""Reference inputs and outputs for the six Silero VAD files of silero-vad 6.2.3, computed by
the Python onnxruntime (pinned in .ci/setup) with the spec's session: CPUExecutionProvider only,
sequential, extended optimization, one intra- and one inter-op thread.

Writes onnx/silero/<stem>_input.npz and <stem>_expected.npz (deterministic: stored entries,
fixed 1980-01-01 timestamps) and onnx/silero/manifest.json. `--check` recomputes in memory
and fails if a committed file differs. Run from the project root."""
import hashlib
import importlib.util
import io
import json
import os
import sys
import zipfile

import numpy as np
import onnxruntime as ort

FILES = [
    "silero_vad.onnx",
    "silero_vad_16k_op15.onnx",
    "silero_vad_16k_sequence.onnx",
    "silero_vad_half.onnx",
    "silero_vad_op18_ifless.onnx",
    "silero_vad_openvino_16k.onnx",
]
OUT = os.path.join("onnx", "silero")
DTYPES = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(double)": np.float64,
}


def data_dir():
    spec = importlib.util.find_spec("silero_vad")
    if spec is None:
        sys.exit("silero-vad is not installed (.ci/setup installs silero-vad==6.2.3)")
    return os.path.join(spec.submodule_search_locations[0], "data")


def session(path):
    o = ort.SessionOptions()
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    o.intra_op_num_threads = 1
    o.inter_op_num_threads = 1
    o.log_severity_level = 3
    s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"], s.get_providers()
    return s


def inputs_for(s):
    """A fixed 16 kHz frame (a 440 Hz tone plus a slow chirp, amplitude 0.1), zero states,
    sr 16000; symbolic batch 1, symbolic frame length 512."""
    feeds = {}
    for i in s.get_inputs():
        dt = DTYPES[i.type]
        if i.name == "sr":
            feeds[i.name] = np.array(16000, dtype=dt)
            continue
        shape = [d if isinstance(d, int) else None for d in i.shape]
        if i.name == "input":
            shape = [1 if d is None and k == 0 else (512 if d is None else d) for k, d in enumerate(shape)]
            n = int(np.prod(shape))
            t = np.arange(n, dtype=np.float64) / 16000.0
            x = 0.1 * np.sin(2 * np.pi * 440.0 * t) + 0.05 * np.sin(2 * np.pi * (100.0 + 2000.0 * t) * t)
            feeds[i.name] = x.reshape(shape).astype(dt)
        else:
            shape = [1 if d is None else d for d in shape]
            feeds[i.name] = np.zeros(shape, dtype=dt)
    return feeds


def npz(arrays):
    """Deterministic .npz: stored NPY 1.0 entries in the given order, fixed timestamps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, a in arrays:
            b = io.BytesIO()
            np.lib.format.write_array(b, np.array(a, order="C", copy=True), version=(1, 0))
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0
            z.writestr(info, b.getvalue())
    return buf.getvalue()


def build():
    d = data_dir()
    files = {}
    manifest = []
    for f in FILES:
        path = os.path.join(d, f)
        model = open(path, "rb").read()
        s = session(path)
        feeds = inputs_for(s)
        outs = s.run(None, feeds)
        stem = f[: -len(".onnx")]
        inp = npz([(i.name, feeds[i.name]) for i in s.get_inputs()])
        exp = npz([(o.name, v) for o, v in zip(s.get_outputs(), outs)])
        files[f"{stem}_input.npz"] = inp
        files[f"{stem}_expected.npz"] = exp
        manifest.append({
            "model": f,
            "model_sha256": hashlib.sha256(model).hexdigest(),
            "input": f"{stem}_input.npz",
            "input_sha256": hashlib.sha256(inp).hexdigest(),
            "expected": f"{stem}_expected.npz",
            "expected_sha256": hashlib.sha256(exp).hexdigest(),
        })
    doc = {
        "schema": "nbg-silero-reference/1",
        "onnxruntime": ort.__version__,
        "tolerance_abs": 1e-5,
        "files": manifest,
    }
    files["manifest.json"] = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    return files


def main():
    check = "--check" in sys.argv[1:]
    files = build()
    bad = 0
    for name, data in sorted(files.items()):
        path = os.path.join(OUT, name)
        if check:
            try:
                same = open(path, "rb").read() == data
            except FileNotFoundError:
                same = False
            print(f"{name}: {'identical' if same else 'DIFFERS'}")
            bad += not same
        else:
            os.makedirs(OUT, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            print(f"wrote {path} ({len(data)} bytes)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
