#!/usr/bin/env python3
"""Benchmark (not a test): a real board file run on the vendor's simulator beside its source
model run by LiteRT, the TFLite CPU runtime (issue 42).

For each NBG given (default: the A733 face detector of ../shared/corpus/v2 and its fp16 twin in
controls/public/v2-twins), the same float32 input goes to `nbg vendor run` (which converts it to
the file's stored type and its outputs back to float32) and to LiteRT on the .tflite source
model. Outputs are paired by shape, in order; each pair reports max abs error, correlation and
the reference's range. Inputs: uniform in [-1, 1) (seed 0), and a smooth image (a gradient with
a disc, in the model's [-1, 1] range).

Needs the driver (`bash .ci/setup`) and LiteRT, pinned here:
    python3 -m pip install ai-edge-litert==2.3.0
Usage: bench/board_vs_litert.py [--model SOURCE.tflite] [FILE.nb...]
    NBG=path/to/nbg skips the release build. Prints a Markdown table.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LITERT = "2.3.0"


def litert(model):
    try:
        import ai_edge_litert
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        sys.exit(f"LiteRT is missing: python3 -m pip install ai-edge-litert=={LITERT}")
    version = getattr(ai_edge_litert, "__version__", None)
    it = Interpreter(model_path=model, num_threads=1)
    it.allocate_tensors()
    return it, version


def run_litert(it, x):
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return [(o["name"], it.get_tensor(o["index"])) for o in it.get_output_details()]


def inputs(shape):
    rng = np.random.default_rng(0)
    yield "uniform [-1, 1), seed 0", rng.uniform(-1, 1, shape).astype(np.float32)
    _, h, w, c = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([xx / w, yy / h, 0.5 * np.ones_like(xx)], axis=-1)[..., :c]
    disc = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) < (min(h, w) / 4) ** 2
    img[disc] = [0.9, 0.7, 0.6][:c]
    yield "smooth image (gradient and disc)", (img * 2 - 1)[None].astype(np.float32)


def nbg_inputs(nbg, file):
    info = subprocess.run([nbg, "info", "--json", file], capture_output=True, text=True, check=True)
    import json

    return json.loads(info.stdout)["files"][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "../shared/models/face_detection_short_range.tflite"))
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or [
        os.path.join(ROOT, "../shared/corpus/v2/a733-face_detector_int16-0000.nb"),
        os.path.join(ROOT, "controls/public/v2-twins/a733-face_detector_fp16-0000.nb"),
    ]
    nbg = os.environ.get("NBG")
    if not nbg:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=ROOT, check=True)
        nbg = os.path.join(ROOT, "target/release/nbg")
    it, version = litert(a.model)
    shape = tuple(it.get_input_details()[0]["shape"])
    print(f"source model {os.path.basename(a.model)} on LiteRT {version} (1 thread); simulator via `nbg vendor run`\n")
    print("| file | input | output | reference range | max abs error | correlation | run s |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for file in files:
            info = nbg_inputs(nbg, file)
            name = info["inputs"][0]["name"]
            for label, x in inputs(shape):
                src = os.path.join(tmp, "in.npz")
                out = os.path.join(tmp, "out.npz")
                np.savez(src, **{name: x})
                t = time.monotonic()
                subprocess.run([nbg, "vendor", "run", file, "--input", src, "-o", out, "--force"], check=True, stdout=subprocess.DEVNULL)
                seconds = time.monotonic() - t
                sim = np.load(out)
                ref = run_litert(it, x)
                used = set()
                for rname, r in ref:
                    k = next(k for k in sim.files if k not in used and sim[k].shape == r.shape)
                    used.add(k)
                    s = sim[k].astype(np.float64)
                    d = np.abs(s - r)
                    corr = np.corrcoef(s.ravel(), r.ravel())[0, 1]
                    print(f"| {os.path.basename(file)} | {label} | {rname} = {k} | {r.min():.2f}..{r.max():.2f} | {d.max():.4f} | {corr:.7f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
