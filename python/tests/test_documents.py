"""Every object equals what the `nbg` command prints with --json, on every public file."""

import json

import numpy
import pytest

import nbg_lab
from conftest import SHARED, public_files


@pytest.mark.parametrize("path", public_files(), ids=lambda p: p.name)
def test_parse_to_dict_is_parse_json(nbg, path):
    status, out = nbg("parse", "--json", path)
    expected = json.loads(out)
    if status != 0:
        with pytest.raises(nbg_lab.NbgError) as e:
            nbg_lab.parse(path)
        assert e.value.code == expected["error"]["code"]
        return
    graph = nbg_lab.parse(path)
    assert graph.to_dict() == expected
    data = path.read_bytes()
    # In memory, in place (bytes, a view of bytes) or copied (bytearray): the same document.
    for source in (data, memoryview(data), bytearray(data)):
        assert nbg_lab.parse(source).to_dict() == expected
    assert graph.target == expected["target"]
    assert graph.format == expected["format"]
    assert graph.sha256 == expected["file"]["sha256"]
    assert [t.name for t in graph.inputs] == [t["name"] for t in expected["inputs"]]
    assert [t.shape for t in graph.outputs] == [t["npz_shape"] for t in expected["outputs"]]
    assert len(graph.layers) == len(expected["layers"] or [])
    assert len(graph.operations) == len(expected["operations"] or [])
    assert sum(s.size for s in graph.sections) > 0


@pytest.mark.parametrize("path", public_files(), ids=lambda p: p.name)
def test_coefficients_are_the_npz_nbg_writes(nbg, path, tmp_path):
    try:
        graph = nbg_lab.parse(path)
    except nbg_lab.NbgError:
        return
    for flt in (False, True):
        npz = tmp_path / f"w{int(flt)}.npz"
        nbg("coefficients", path, "-o", npz, *(["--float"] if flt else []))
        arrays = graph.coefficients(float=flt)
        with numpy.load(npz) as written:
            assert list(arrays) == list(written.files)
            for name, array in arrays.items():
                w = written[name]
                assert array.dtype == w.dtype and array.shape == w.shape, name
                assert array.tobytes() == w.tobytes(), name


@pytest.mark.parametrize("path", public_files(), ids=lambda p: p.name)
def test_image_roundtrip_check_and_info_are_their_commands(nbg, path):
    status, out = nbg("image", "--json", path)
    if status != 0:
        with pytest.raises(nbg_lab.NbgError):
            nbg_lab.image(path)
        return
    image = nbg_lab.image(path)
    assert image.to_dict() == json.loads(out)
    assert nbg_lab.image(path.read_bytes()).to_dict() == json.loads(out)
    owners = image.owners
    assert owners[0].start == 0 and owners[-1].end == path.stat().st_size
    assert all(a.end == b.start for a, b in zip(owners, owners[1:]))
    assert image.identical is True
    assert sum(image.totals.values()) == path.stat().st_size

    expected = json.loads(nbg("roundtrip", "--json", path)[1])["files"][0]
    assert nbg_lab.roundtrip(path) == expected
    assert nbg_lab.check([path]) == json.loads(nbg("check", "--json", path)[1])
    assert nbg_lab.info(path) == json.loads(nbg("info", "--json", path)[1])["files"][0]


def test_check_against_a_device_and_diff_are_their_commands(nbg, shared_files):
    a, b = shared_files[0], shared_files[1]
    args = ["--target", "0x1000003b", "--runtime", "0x00020000"]
    expected = json.loads(nbg("check", "--json", *args, a, b)[1])
    assert nbg_lab.check([a, b], target=0x1000003B, runtime=0x00020000) == expected
    same = [p for p in shared_files if p.parent == a.parent]
    pair = same[:2]
    assert nbg_lab.diff(*pair) == json.loads(nbg("diff", "--json", *pair)[1])


def test_locate_is_nbg_locate(nbg):
    npz = SHARED / "models/face_detection_short_range.weights.npz"
    nb = SHARED / "corpus/v1/st-blazeface_128x128_quant-001e.nb"
    if not (npz.is_file() and nb.is_file()):
        from conftest import missing

        missing("the ST BlazeFace file and its MediaPipe weights in ../shared")
    assert nbg_lab.locate(npz, nb) == json.loads(nbg("locate", "--json", npz, nb)[1])
