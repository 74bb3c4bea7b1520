#!/usr/bin/env python3
"""Generate onnx/schemas.json, the operator schema table the ONNX audit's checker uses, from
the schema registry of the pinned `onnx` package (.ci/setup installs onnx==1.23.2): for every
schema version, its domain, name, since-version, deprecation, input and output arity, formal
inputs and outputs (name, type string, single/optional/variadic, homogeneous), attributes (name, type,
required) and type constraints. Never edited by hand.

Usage (from the project root): python3 bench/onnx_schemas.py [--check]
--check regenerates in memory and exits 1 if the committed file differs."""
import json
import sys

import onnx
import onnx.defs

PINNED = "1.23.2"
PATH = "onnx/schemas.json"
OPTION = {0: "single", 1: "optional", 2: "variadic"}


def formal(params):
    return [[p.name, p.type_str, OPTION[int(p.option)], bool(p.is_homogeneous)] for p in params]


def table():
    if onnx.__version__ != PINNED:
        sys.exit(f"onnx {onnx.__version__} is installed; the table is generated from onnx=={PINNED}")
    ops = []
    for s in onnx.defs.get_all_schemas_with_history():
        ops.append({
            "domain": s.domain,
            "name": s.name,
            "since": s.since_version,
            "deprecated": bool(s.deprecated),
            "inputs": [s.min_input, s.max_input],
            "outputs": [s.min_output, s.max_output],
            "formal_inputs": formal(s.inputs),
            "formal_outputs": formal(s.outputs),
            "attributes": sorted([k, int(a.type), bool(a.required)] for k, a in s.attributes.items()),
            "type_constraints": {t.type_param_str: sorted(t.allowed_type_strs) for t in s.type_constraints},
        })
    ops.sort(key=lambda o: (o["domain"], o["name"], o["since"]))
    head = {"schema": "nbg-onnx-operator-schemas/1", "onnx": onnx.__version__,
            "generator": "bench/onnx_schemas.py", "count": len(ops)}
    lines = [json.dumps(head, sort_keys=True)[:-1] + ', "operators": [']
    lines += [json.dumps(o, sort_keys=True) + ("," if i + 1 < len(ops) else "") for i, o in enumerate(ops)]
    lines.append("]}")
    return ("\n".join(lines) + "\n").encode()


def main():
    data = table()
    if "--check" in sys.argv[1:]:
        try:
            same = open(PATH, "rb").read() == data
        except FileNotFoundError:
            same = False
        print(f"{PATH}: {'identical' if same else 'DIFFERS from its regeneration'}")
        sys.exit(0 if same else 1)
    with open(PATH, "wb") as f:
        f.write(data)
    print(f"wrote {PATH} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
