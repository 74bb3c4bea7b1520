#!/usr/bin/env python3
"""ONNX conformance harness: the ONNX backend node tests, regenerated with the pinned `onnx`
package (.ci/setup installs onnx==1.23.2), plus the six Silero VAD files of silero-vad 6.2.3,
run through `nbg onnx audit`, `nbg onnx run --engine ort` and `--engine tract`, and the Python
onnxruntime as the baseline. Every model's first data set is the input; outputs are compared
with the test's expected outputs under the test's own tolerance (rtol 1e-3, atol 1e-7 unless
the case says otherwise); where both engines ran and differ, `nbg onnx crosscheck` must report
the disagreement.

Usage (from the project root, after `cargo build`):
  python3 bench/onnx_conformance.py [--nbg target/debug/nbg] [--sample N] [--sets node,simple,...] [--write notebooks/onnx-conformance.md] [--strict]
--sample N   a fixed sample: the N node tests whose SHA-256 of the name sorts first (CI: 240);
             the stored sets then do not run
--sets LIST  which backend sets: node, simple, pytorch-converted, pytorch-operator, light
--audit-only run `nbg onnx audit` alone (no engine, no Python onnxruntime) and list what it
             refuses: a quick check that the checker admits every valid test model
--fold-int-inputs  (with --audit-only) make every small int32/int64 input of a node test an
             initializer holding its test data, so that inference reads shapes, axes and pads
             as constants; the declared outputs then check that inference
--contradict (with --audit-only) also audit each admitted model with its first output's last
             static dimension declared one larger: counts the tests whose output shape inference
             pins (refused ONNX_SHAPE_MISMATCH), by operator
--strict     exit 1 on any panic (exit 101 or signal) or any wrong result under ort, or a tract
             disagreement crosscheck misses
Writes a summary table to stdout (and to --write)."""
import argparse
import collections
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx.backend.test.case import node as node_cases

PINNED_ONNX = "1.23.2"
PINNED_ORT = "1.31.1"
TIMEOUT = 120
KEEP_MARKER = "<!-- hand-written below: kept by bench/onnx_conformance.py --write -->"


def python_session(path):
    o = ort.SessionOptions()
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    o.intra_op_num_threads = 1
    o.inter_op_num_threads = 1
    o.log_severity_level = 4
    return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])


def close(got, want, rtol, atol):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "fc" or got.dtype.kind in "fc":
        try:
            return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))
        except (TypeError, ValueError):
            return False
    if want.dtype.kind == "V" or got.dtype.kind == "V":
        return got.tobytes() == want.tobytes()
    try:
        return bool(np.array_equal(got, want))
    except (TypeError, ValueError):
        return False


def nbg(binary, *args):
    try:
        p = subprocess.run([binary, *args], capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", None, ""
    out = None
    if p.stdout:
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = None
    if p.returncode == 101 or p.returncode < 0:
        return "panic", out, p.stderr.decode(errors="replace")[-400:]
    return p.returncode, out, p.stderr.decode(errors="replace")[-400:]


def engine_run(binary, model, inp, out, engine):
    code, j, err = nbg(binary, "onnx", "run", model, "--mode", "cpu", "--input", inp, "--output", out, "--json", "--engine", engine)
    if code == 0:
        return "ran", None, None
    if code in ("panic", "timeout"):
        return code, err, None
    if code == 1 and j and "error" in j:
        return "refused", j["error"]["code"], j["error"].get("message", "")
    return "error", f"exit {code}: {err.strip()[-200:]}", None


def load_npz(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def save_npz(path, arrays):
    # String tensors travel as NumPy's fixed-width unicode (`<U{n}`), never as pickled objects.
    arrays = {k: (v.astype(str) if v.dtype == object else v) for k, v in arrays.items()}
    np.savez(path, **arrays)


def node_suite(sample):
    """The node tests, regenerated in memory by the pinned `onnx` package's writer."""
    all_cases = sorted(node_cases.collect_testcases(None), key=lambda c: c.name)
    if sample:
        all_cases = sorted(all_cases, key=lambda c: hashlib.sha256(c.name.encode()).hexdigest())[:sample]
        all_cases.sort(key=lambda c: c.name)
    for case in all_cases:
        inputs, outputs = case.data_sets[0]
        g = case.model.graph
        tensors = all(isinstance(x, np.ndarray) for x in list(inputs) + list(outputs))
        yield {
            "name": case.name,
            "kind": "node",
            "model": case.model.SerializeToString(),
            "feeds": {g.input[j].name: x for j, x in enumerate(inputs)} if tensors else None,
            "expected": {g.output[j].name: x for j, x in enumerate(outputs)} if tensors else None,
            "rtol": getattr(case, "rtol", 1e-3) or 1e-3,
            "atol": getattr(case, "atol", 1e-7) or 1e-7,
        }


def runtime_inputs(graph):
    """Graph inputs that are not initializers (IR 3 models list their weights as inputs too)."""
    weights = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in weights]


def data_suite(kind):
    """A stored model set of the pinned `onnx` package (`simple`, `pytorch-converted`,
    `pytorch-operator`): `model.onnx` and `test_data_set_0/{input,output}_N.pb`, inputs in the
    order of the graph's runtime inputs, as the package's own backend runner feeds them."""
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", kind)
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        data = os.path.join(d, "test_data_set_0")
        model_bytes = open(os.path.join(d, "model.onnx"), "rb").read()
        g = onnx.load_from_string(model_bytes).graph
        def arrays(prefix):
            out = []
            for k in range(len([f for f in os.listdir(data) if f.startswith(prefix)])):
                t = onnx.TensorProto()
                t.ParseFromString(open(os.path.join(data, f"{prefix}_{k}.pb"), "rb").read())
                out.append(onnx.numpy_helper.to_array(t))
            return out
        ins, outs = arrays("input"), arrays("output")
        yield {
            "name": f"{kind}/{name}",
            "kind": kind,
            "model": model_bytes,
            "feeds": {i.name: x for i, x in zip(runtime_inputs(g), ins)},
            "expected": {o.name: x for o, x in zip(g.output, outs)},
            "rtol": 1e-3,
            "atol": 1e-7,
        }


def light_suite():
    """The `light` models (real architectures with their weights replaced). The package ships no
    inputs: as its own runner does, feed seeded random inputs; the reference output is then the
    Python onnxruntime's, so `correct` here means equal to it within tolerance."""
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    rng = np.random.default_rng(20261130)
    for f in sorted(x for x in os.listdir(root) if x.endswith(".onnx")):
        model_bytes = open(os.path.join(root, f), "rb").read()
        g = onnx.load_from_string(model_bytes).graph
        feeds = {}
        for i in runtime_inputs(g):
            t = i.type.tensor_type
            shape = [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]
            dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
            feeds[i.name] = rng.standard_normal(shape).astype(dtype) if dtype.kind == "f" else rng.integers(0, 2, shape).astype(dtype)
        yield {"name": f"light/{f[:-5]}", "kind": "light", "model": model_bytes, "feeds": feeds,
               "expected": None, "rtol": 1e-3, "atol": 1e-4}


SUITES = ("node", "simple", "pytorch-converted", "pytorch-operator", "light")


def cases(sample, sets):
    if onnx.__version__ != PINNED_ONNX or ort.__version__ != PINNED_ORT:
        sys.exit(f"need onnx=={PINNED_ONNX} and onnxruntime=={PINNED_ORT} (.ci/setup); have {onnx.__version__} and {ort.__version__}")
    if "node" in sets:
        yield from node_suite(sample)
    if sample:
        return
    for kind in ("simple", "pytorch-converted", "pytorch-operator"):
        if kind in sets:
            yield from data_suite(kind)
    if "light" in sets:
        yield from light_suite()


def silero_cases():
    spec = importlib.util.find_spec("silero_vad")
    if spec is None:
        sys.exit("silero-vad is not installed (.ci/setup installs it)")
    data = os.path.join(spec.submodule_search_locations[0], "data")
    manifest = json.load(open(os.path.join("onnx", "silero", "manifest.json")))
    for f in manifest["files"]:
        yield f["model"], os.path.join(data, f["model"]), os.path.join("onnx", "silero", f["input"]), os.path.join("onnx", "silero", f["expected"])


def contradicted(model_bytes):
    """The model with its first output's last dimension declared one larger, or None when that
    dimension is not a static value."""
    m = onnx.load_from_string(model_bytes)
    t = m.graph.output[0].type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape") or not t.tensor_type.shape.dim:
        return None
    d = t.tensor_type.shape.dim[-1]
    if not d.HasField("dim_value"):
        return None
    d.dim_value += 1
    return m.SerializeToString()


def fold_int_inputs(model_bytes, feeds):
    """The model with each int32/int64 input of at most 64 elements an initializer of its data."""
    m = onnx.load_from_string(model_bytes)
    g = m.graph
    keep = []
    for i in g.input:
        x = feeds.get(i.name)
        if isinstance(x, np.ndarray) and x.dtype in (np.int32, np.int64) and x.size <= 64:
            g.initializer.append(onnx.numpy_helper.from_array(x, i.name))
        else:
            keep.append(i)
    if len(keep) == len(g.input):
        return model_bytes
    del g.input[:]
    g.input.extend(keep)
    m.ir_version = max(m.ir_version, 4)
    return m.SerializeToString()


def progress(done, total, started):
    """A progress bar on stderr, only when stderr is a terminal (never in piped or logged output)."""
    if not sys.stderr.isatty():
        return
    width = 40
    filled = width * done // max(total, 1)
    end = "\n" if done == total else ""
    print(f"\r{'#' * filled}{'-' * (width - filled)} {done}/{total} backend tests {time.monotonic() - started:.0f}s",
          end=end, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nbg", default="target/debug/nbg")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--write")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--audit-only", action="store_true")
    ap.add_argument("--fold-int-inputs", action="store_true")
    ap.add_argument("--contradict", action="store_true")
    ap.add_argument("--sets", default=",".join(SUITES), help="comma-separated backend sets (default: all)")
    args = ap.parse_args()
    sets = args.sets.split(",")
    if not set(sets) <= set(SUITES):
        sys.exit(f"--sets: choose from {','.join(SUITES)}")
    binary = os.path.abspath(args.nbg)
    rows = []
    tmp = tempfile.mkdtemp(prefix="nbg-conformance-")
    todo = list(cases(args.sample, sets))
    started = time.monotonic()
    for i, case in enumerate(todo):
        progress(i, len(todo), started)
        d = os.path.join(tmp, case["name"].replace("/", "__"))
        os.makedirs(d)
        model_path = os.path.join(d, "model.onnx")
        if args.fold_int_inputs and case["feeds"] is not None:
            case["model"] = fold_int_inputs(case["model"], case["feeds"])
        with open(model_path, "wb") as f:
            f.write(case["model"])
        row = {"name": case["name"], "kind": case["kind"]}
        rows.append(row)
        feeds, expected = case["feeds"], case["expected"]
        if feeds is None:
            row["skip"] = "non-tensor input or output (sequence, map, optional): not carried by the .npz boundary"
            continue
        rtol, atol = case["rtol"], case["atol"]
        inp = os.path.join(d, "in.npz")
        try:
            save_npz(inp, feeds)
        except Exception as e:  # names numpy cannot store
            row["skip"] = f"input archive: {e}"
            continue
        py = None
        if args.audit_only:
            code, j, err = nbg(binary, "onnx", "audit", "--json", model_path)
            row["audit"] = "admitted" if code == 0 else (j["error"]["code"] if code == 1 and j and "error" in j else f"exit {code}")
            if code != 0:
                row["audit_message"] = j["error"]["message"] if code == 1 and j and "error" in j else err
            elif args.contradict:
                row["ops"] = sorted({n.op_type for n in onnx.load_from_string(case["model"]).graph.node})
                bad = contradicted(case["model"])
                if bad is not None:
                    bad_path = os.path.join(d, "contradicted.onnx")
                    with open(bad_path, "wb") as f:
                        f.write(bad)
                    code, j, err = nbg(binary, "onnx", "audit", "--json", bad_path)
                    row["contradicted"] = "admitted" if code == 0 else (j["error"]["code"] if code == 1 and j and "error" in j else f"exit {code}")
            continue
        try:
            session = python_session(model_path)
            got = session.run(None, feeds)
            py = {o.name: v for o, v in zip(session.get_outputs(), got)}
            if expected is None:
                expected = py
                row["python_ort"] = "reference"
            else:
                row["python_ort"] = "correct" if set(py) == set(expected) and all(close(py[k], expected[k], rtol, atol) for k in expected) else "wrong"
        except Exception:
            row["python_ort"] = "refused"
            if expected is None:
                row["skip"] = "the Python onnxruntime, the reference for this set, refuses the model"
                continue
        code, j, err = nbg(binary, "onnx", "audit", "--json", model_path)
        if code != 0:
            row["audit"] = j["error"]["code"] if code == 1 and j and "error" in j else f"exit {code}"
            if code == "panic":
                row["audit_panic"] = err
            continue
        row["audit"] = "admitted"
        outs = {}
        for engine in ("ort", "tract"):
            out = os.path.join(d, f"{engine}.npz")
            status, detail, message = engine_run(binary, model_path, inp, out, engine)
            if status == "ran":
                res = load_npz(out)
                ok = set(res) == set(expected) and all(close(res[k], expected[k], rtol, atol) for k in expected)
                row[engine] = "correct" if ok else "wrong"
                # ONNX Runtime's own result, not the integration's: the same bytes as the Python
                # onnxruntime, which also disagrees with the test's expected output.
                if engine == "ort" and not ok and py is not None and row["python_ort"] == "wrong" and set(py) == set(res) \
                        and all(np.asarray(py[k]).tobytes() == res[k].tobytes() for k in res):
                    row[engine] = "wrong-as-python-onnxruntime"
                outs[engine] = res
            else:
                row[engine] = status
                row[engine + "_detail"] = detail
                if message:
                    row[engine + "_message"] = message
        if len(outs) == 2 or row.get("tract") == "wrong":
            same = len(outs) == 2 and all(close(outs["tract"][k], outs["ort"][k], 1e-4, 1e-5) for k in outs["ort"] if k in outs["tract"])
            if not same or row["ort"] != row["tract"]:
                code, j, _ = nbg(binary, "onnx", "crosscheck", model_path, "--input", inp, "--json")
                row["crosscheck"] = j["verdict"] if j else f"exit {code}"
    progress(len(todo), len(todo), started)
    if args.audit_only:
        run = [r for r in rows if "skip" not in r]
        refused = [r for r in run if r["audit"] != "admitted"]
        print(f"audit only: {len(rows)} cases, {len(run)} run, {len(run) - len(refused)} admitted, {len(refused)} refused")
        for r in refused:
            print(f"- `{r['name']}`: `{r['audit']}` {r.get('audit_message', '')}")
        if args.contradict:
            tried = [r for r in run if "contradicted" in r]
            caught = collections.Counter(r["contradicted"] for r in tried)
            print(f"contradicted output declarations: {len(tried)} models, " + ", ".join(f"{k} {v}" for k, v in sorted(caught.items())))
            by_op = collections.defaultdict(lambda: [0, 0])
            for r in tried:
                if len(r["ops"]) == 1:
                    by_op[r["ops"][0]][0] += 1
                    by_op[r["ops"][0]][1] += r["contradicted"] == "ONNX_SHAPE_MISMATCH"
            print("single-operator models, refused ONNX_SHAPE_MISMATCH / contradicted: " + ", ".join(f"{op} {c}/{t}" for op, (t, c) in sorted(by_op.items())))
        sys.exit(1 if refused and args.strict else 0)
    for name, model, inp, exp in silero_cases():
        row = {"name": name, "kind": "silero"}
        rows.append(row)
        expected = load_npz(exp)
        got = python_session(model).run(None, load_npz(inp))
        row["python_ort"] = "correct" if all(close(v, expected[o.name], 0, 1e-5) for o, v in zip(python_session(model).get_outputs(), got)) else "wrong"
        code, j, _ = nbg(binary, "onnx", "audit", "--json", model)
        row["audit"] = "admitted" if code == 0 else (j["error"]["code"] if j and "error" in j else f"exit {code}")
        if code != 0:
            continue
        for engine in ("ort", "tract"):
            out = os.path.join(tmp, f"{name}-{engine}.npz")
            status, detail, message = engine_run(binary, model, inp, out, engine)
            if status == "ran":
                res = load_npz(out)
                row[engine] = "correct" if all(close(res[k], expected[k], 0, 1e-5) for k in expected) else "wrong"
            else:
                row[engine] = status
                row[engine + "_detail"] = detail
        code, j, _ = nbg(binary, "onnx", "crosscheck", model, "--input", inp, "--json")
        row["crosscheck"] = j["verdict"] if j else f"exit {code}"
    report, failures = summarize(rows, args)
    print(report)
    if args.write:
        # Hand-written notes below the marker survive regeneration.
        if os.path.exists(args.write):
            old = open(args.write).read()
            if KEEP_MARKER in old:
                report += "\n" + KEEP_MARKER + old.split(KEEP_MARKER, 1)[1]
        with open(args.write, "w") as f:
            f.write(report)
    if args.strict and failures:
        print("FAILED: " + "; ".join(failures), file=sys.stderr)
        sys.exit(1)


def summarize(rows, args):
    node = [r for r in rows if r["kind"] in SUITES]
    sil = [r for r in rows if r["kind"] == "silero"]
    run = [r for r in node if "skip" not in r]
    c = collections.Counter
    audit = c(r["audit"] for r in run)
    lines = []
    add = lines.append
    sample = f"a fixed sample of {args.sample}" if args.sample else "all"
    add("# ONNX conformance\n")
    add(f"Generated by `python3 bench/onnx_conformance.py{' --sample ' + str(args.sample) if args.sample else ''}` "
        f"with onnx {onnx.__version__} and onnxruntime {ort.__version__} (Python baseline); `nbg` engines: "
        f"ONNX Runtime {PINNED_ORT} through `ort` (`--engine ort`, the oracle) and tract-onnx 0.23.9 (`--engine tract`).\n")
    kinds = c(r["kind"] for r in node)
    add(f"Backend tests: {sample} of the node tests the pinned `onnx` package generates ({kinds['node']} cases)"
        + ("" if args.sample else ", plus its stored `simple`, `pytorch-converted`, `pytorch-operator` and `light` models "
           f"({kinds['simple']}, {kinds['pytorch-converted']}, {kinds['pytorch-operator']} and {kinds['light']})")
        + f"; {len(node)} in all, {len(node) - len(run)} skipped because an input or output is not a tensor "
        "(or, for `light`, the Python onnxruntime refuses the model). Plus the six Silero VAD files of silero-vad 6.2.3 "
        "on the committed inputs (`onnx/silero/`).\n")
    add("Each case's first data set is the input; `correct` means every output matches the expected output within "
        "the case's tolerance (rtol 1e-3, atol 1e-7 by default; Silero: atol 1e-5). The `light` models ship no data: "
        "they get seeded random inputs and the Python onnxruntime's outputs are their reference (rtol 1e-3, atol 1e-4), "
        "as the package's own runner does with its reference evaluator. `refused` is a value "
        "(exit 1 with a code), `panic` an exit 101 or a signal.\n")
    add("## By set\n")
    add("| set | cases | run | admitted | Python onnxruntime correct | `ort` correct | `ort` wrong | `tract` correct | `tract` wrong |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in SUITES:
        rs = [r for r in node if r["kind"] == kind]
        if not rs:
            continue
        ran = [r for r in rs if "skip" not in r]
        adm = [r for r in ran if r["audit"] == "admitted"]
        py_ok = sum(r.get("python_ort") in ("correct", "reference") for r in ran)
        add(f"| `{kind}` | {len(rs)} | {len(ran)} | {len(adm)} | {py_ok}{' (reference)' if kind == 'light' else ''} | "
            f"{sum(r.get('ort') == 'correct' for r in adm)} | {sum(r.get('ort') == 'wrong' for r in adm)} | "
            f"{sum(r.get('tract') == 'correct' for r in adm)} | {sum(r.get('tract') == 'wrong' for r in adm)} |")
    add("")
    add("## All backend tests\n")
    add("| | count |")
    add("|---|---:|")
    add(f"| cases run | {len(run)} |")
    add(f"| audit admitted | {audit['admitted']} |")
    for k, v in sorted(audit.items()):
        if k != "admitted":
            add(f"| audit refused `{k}` | {v} |")
    for label, key in (("Python onnxruntime (all run cases)", "python_ort"),):
        cc = c(r.get(key, "n/a") for r in run)
        add(f"| {label}: correct | {cc['correct']} |")
        add(f"| {label}: wrong | {cc['wrong']} |")
        add(f"| {label}: refused | {cc['refused']} |")
        if cc["reference"]:
            add(f"| {label}: the reference (`light`) | {cc['reference']} |")
        finite = [r for r in run if r.get(key) == "correct" and not (r.get("ort") == "refused" and r.get("ort_detail") == "TENSOR_BOUNDARY")]
        add(f"| {label}: correct, excluding cases whose NaN or infinity the spec's tensor boundary refuses | {len(finite)} |")
    admitted = [r for r in run if r["audit"] == "admitted"]
    for engine in ("ort", "tract"):
        cc = c(r.get(engine) for r in admitted)
        add(f"| `nbg onnx run --engine {engine}`: correct | {cc['correct']} |")
        add(f"| `--engine {engine}`: wrong | {cc['wrong']} |")
        if engine == "ort":
            add(f"| `--engine ort`: wrong exactly as the Python onnxruntime (ONNX Runtime's own result) | {cc['wrong-as-python-onnxruntime']} |")
        refused = c(r.get(engine + "_detail") for r in admitted if r.get(engine) == "refused")
        for k, v in sorted(refused.items()):
            add(f"| `--engine {engine}`: refused `{k}` | {v} |")
        for k in ("panic", "timeout", "error"):
            add(f"| `--engine {engine}`: {k} | {cc[k]} |")
    xc = c(r.get("crosscheck") for r in admitted if "crosscheck" in r)
    for k, v in sorted(xc.items()):
        add(f"| crosscheck verdict `{k}` (where the engines' results differ) | {v} |")
    add("")
    add("## Silero VAD (silero-vad 6.2.3)\n")
    add("| file | audit | ort | tract | crosscheck | Python onnxruntime |")
    add("|---|---|---|---|---|---|")
    for r in sil:
        add(f"| `{r['name']}` | {r['audit']} | {r.get('ort', '-')} | {r.get('tract', '-')}"
            f"{' (' + str(r.get('tract_detail')) + ')' if r.get('tract_detail') else ''} | {r.get('crosscheck', '-')} | {r['python_ort']} |")
    add("")
    def listing(title, items):
        add(f"## {title}\n")
        if not items:
            add("None.\n")
            return
        for it in items:
            add(f"- {it}")
        add("")
    listing("Audit refusals of backend tests (the tests are valid models: each is a checker gap or a documented limit)",
            [f"`{r['name']}`: `{r['audit']}`" for r in run if r["audit"] != "admitted"])
    listing("Wrong results under `--engine ort`", [f"`{r['name']}`" for r in admitted if r.get("ort") == "wrong"])
    listing("Results where ONNX Runtime itself (Rust and Python, byte-identical) disagrees with the test's expected output",
            [f"`{r['name']}`" for r in admitted if r.get("ort") == "wrong-as-python-onnxruntime"])
    listing("Wrong results under `--engine tract`",
            [f"`{r['name']}` (crosscheck: {r.get('crosscheck', 'n/a')})" for r in admitted if r.get("tract") == "wrong"])
    listing("Engine errors, panics and timeouts",
            [f"`{r['name']}` {e}: {r.get(e + '_detail')}" for r in admitted for e in ("ort", "tract") if r.get(e) in ("panic", "timeout", "error")])
    gap = [r for r in admitted if r.get("python_ort") in ("correct", "reference") and r.get("ort") != "correct"]
    boundary = [r for r in gap if r.get("ort_detail") == "TENSOR_BOUNDARY"]
    if boundary:
        add(f"{len(boundary)} of the {len(gap)} cases below are `TENSOR_BOUNDARY` refusals: a NaN or infinity in an input or "
            "output, which the spec's tensor boundary refuses on purpose (PoC 9E/9F, section 11); the others "
            "carry their engine message.\n")
    listing("Python onnxruntime correct (or the reference), `nbg` ort not (admitted cases)",
            [f"`{r['name']}`: {r.get('ort')} {r.get('ort_detail') or ''}"
             + (f" ({r['ort_message']})" if r.get("ort_detail") != "TENSOR_BOUNDARY" and r.get("ort_message") else "") for r in gap])
    failures = []
    panics = [r["name"] for r in rows for e in ("audit", "ort", "tract") if r.get(e) in ("panic", "timeout") or str(r.get(e, "")).startswith("exit ")]
    if panics:
        failures.append(f"panics/timeouts/unexpected exits: {panics}")
    wrong = [r["name"] for r in rows if r.get("ort") == "wrong"]
    if wrong:
        failures.append(f"wrong under ort: {wrong}")
    missed = [r["name"] for r in admitted if r.get("ort") == "correct" and r.get("tract") == "wrong" and r.get("crosscheck") != "disagree"]
    # A disagreement with ort refusing cannot be a crosscheck disagreement; it must say so.
    missed += [r["name"] for r in admitted if r.get("ort") != "correct" and r.get("tract") == "wrong" and r.get("crosscheck") not in ("disagree", "ort-refused")]
    if missed:
        failures.append(f"tract wrong but crosscheck did not report a disagreement: {missed}")
    silero_bad = [r["name"] for r in sil if r.get("ort") != "correct"]
    if silero_bad:
        failures.append(f"Silero not correct under ort: {silero_bad}")
    return "\n".join(lines) + "\n", failures


if __name__ == "__main__":
    main()
