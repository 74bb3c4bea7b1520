#!/usr/bin/env python3
"""The reference the checker's shape inference is compared with: for every node output of the
six Silero VAD files (silero-vad 6.2.3, nested `If` subgraphs included) and of the committed
ONNX fixtures, the element type and shape that the pinned `onnx` package's own inference gives
(`onnx.shape_inference.infer_shapes(model, strict_mode=True)`, which itself fails on any
contradiction). The test `onnx_shapes::inference_agrees_with_the_onnx_package` requires `nbg`'s
inference (`checker::infer`) to agree wherever both know a dimension.

Usage (from the project root; .ci/setup installs onnx and silero-vad):
  python3 bench/onnx_shape_reference.py            # writes onnx/shape_reference.json
  python3 bench/onnx_shape_reference.py --check    # exit 1 if the committed file differs"""
import hashlib
import importlib.util
import json
import os
import sys

import onnx
from onnx import shape_inference

PINNED_ONNX = "1.23.2"
OUT = os.path.join("onnx", "shape_reference.json")


def graphs(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                yield from graphs(a.g)
            for sg in a.graphs:
                yield from graphs(sg)


def facts(v):
    t = v.type.tensor_type if v.type.HasField("tensor_type") else None
    if t is None:
        return {"elem": None, "shape": None}
    shape = None
    if t.HasField("shape"):
        shape = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    return {"elem": t.elem_type or None, "shape": shape}


def reference(path):
    data = open(path, "rb").read()
    model = shape_inference.infer_shapes(onnx.load_from_string(data), strict_mode=True)
    values = {}
    for g in graphs(model.graph):
        known = {v.name: v for v in list(g.value_info) + list(g.output)}
        for n in g.node:
            for o in n.output:
                if not o:
                    continue
                if o in values:
                    sys.exit(f"{path}: value {o!r} is produced twice; the reference keys values by name")
                values[o] = facts(known[o]) if o in known else {"elem": None, "shape": None}
    return {"sha256": hashlib.sha256(data).hexdigest(), "values": values}


def main():
    if onnx.__version__ != PINNED_ONNX:
        sys.exit(f"need onnx=={PINNED_ONNX} (.ci/setup); have {onnx.__version__}")
    spec = importlib.util.find_spec("silero_vad")
    if spec is None:
        sys.exit("silero-vad is not installed (.ci/setup installs it)")
    data = os.path.join(spec.submodule_search_locations[0], "data")
    models = {}
    for f in json.load(open(os.path.join("onnx", "silero", "manifest.json")))["files"]:
        models["silero/" + f["model"]] = reference(os.path.join(data, f["model"]))
    for f in json.load(open(os.path.join("onnx", "fixtures", "manifest.json")))["files"]:
        if f["name"].endswith(".onnx"):
            models["fixtures/" + f["name"]] = reference(os.path.join("onnx", "fixtures", f["name"]))
    text = json.dumps({"schema": "nbg-onnx-shape-reference/1", "onnx": onnx.__version__,
                       "inference": "onnx.shape_inference.infer_shapes(model, strict_mode=True)",
                       "models": models}, sort_keys=True, indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        if open(OUT).read() != text:
            sys.exit(f"{OUT} differs from its regeneration: run python3 bench/onnx_shape_reference.py")
        print(f"{OUT}: up to date")
        return
    with open(OUT, "w") as f:
        f.write(text)
    print(f"{OUT}: {sum(len(m['values']) for m in models.values())} values of {len(models)} models")


if __name__ == "__main__":
    main()
