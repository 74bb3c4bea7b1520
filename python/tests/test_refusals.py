"""Bad input raises NbgError with the CLI's code; nothing else ever escapes."""

import json
import os
import random

import pytest

import nbg_lab
from conftest import largest_public_file, v2_board_file


def cli_code(nbg, path):
    """The code `nbg check --json` gives the file."""
    entry = json.loads(nbg("check", "--json", path)[1])["files"][0]
    return entry["error"]["code"]


def refusal(source):
    with pytest.raises(nbg_lab.NbgError) as e:
        nbg_lab.parse(source)
    err = e.value
    assert isinstance(err.code, str) and isinstance(err.offset, int) and err.message
    assert err.code in str(err)
    return err


@pytest.fixture()
def sample():
    path = largest_public_file()
    if path is None:
        from conftest import missing

        missing("a public NBG file")
    return path


def test_truncated_and_wrong_magic_carry_the_cli_code(nbg, sample, tmp_path):
    data = sample.read_bytes()
    cuts = (("truncated.nb", data[:10]), ("half.nb", data[: len(data) // 2]), ("magic.nb", b"XPMN" + data[4:]))
    for name, bad in cuts:
        path = tmp_path / name
        path.write_bytes(bad)
        err = refusal(path)
        assert err.code == cli_code(nbg, path)
        assert refusal(bad).code == err.code
    assert refusal(tmp_path / "magic.nb").code == "bad-magic"
    assert refusal(tmp_path / "truncated.nb").code == "truncated"


def test_a_directory_a_symlink_and_a_missing_file_are_unreadable(nbg, sample, tmp_path):
    link = tmp_path / "link.nb"
    link.symlink_to(sample)
    for path in (tmp_path, link, tmp_path / "absent.nb"):
        err = refusal(path)
        assert err.code == "unreadable" == cli_code(nbg, path)
        assert err.offset == 0


def test_a_2_gib_sparse_file_is_refused_without_reading_it_whole(nbg, tmp_path):
    path = tmp_path / "sparse.nb"
    with open(path, "wb") as f:
        f.truncate(2 << 30)
    err = refusal(path)
    assert (err.code, err.offset) == ("bad-magic", 0)
    assert err.code == cli_code(nbg, path)


def test_a_file_that_changes_after_its_parse_is_refused_not_misread(sample, tmp_path):
    path = tmp_path / "moving.nb"
    path.write_bytes(sample.read_bytes())
    graph = nbg_lab.parse(path)
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) - 1)
        last = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([last[0] ^ 0xFF]))
    with pytest.raises(nbg_lab.NbgError) as e:
        graph.coefficients()
    assert e.value.code == "unreadable" and "changed" in e.value.message


def test_a_file_that_shrinks_while_it_is_read_is_unreadable(sample, tmp_path):
    """A FIFO stands for a file whose content is not there when it is read."""
    fifo = tmp_path / "fifo.nb"
    os.mkfifo(fifo)
    assert refusal(fifo).code == "unreadable"


def test_a_wrong_type_is_a_type_error(sample):
    with pytest.raises(TypeError):
        nbg_lab.parse(12)


def test_mutated_files_raise_only_nbg_errors():
    """Flips, cuts and splices of a public file: a Graph or an NbgError, never anything else."""
    path = v2_board_file()
    if path is None:
        from conftest import missing

        missing("a v2 board file")
    data = path.read_bytes()
    rng = random.Random(69)
    for _ in range(300):
        b = bytearray(data)
        kind = rng.randrange(3)
        if kind == 0:
            for _ in range(rng.randrange(1, 8)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del b[rng.randrange(len(b)) :]
        else:
            at = rng.randrange(len(b) - 4)
            b[at : at + 4] = rng.randbytes(4)
        try:
            g = nbg_lab.parse(bytes(b))
            g.coefficients()
            nbg_lab.image(bytes(b))
        except nbg_lab.NbgError as e:
            assert e.code != "internal-panic", e


def test_a_file_rewritten_while_it_is_parsed_gives_a_graph_or_an_nbg_error(sample, tmp_path):
    """Another thread cuts the file and writes it back while parses run: each parse sees the
    whole file, a cut one (a rule's code) or a short read (`unreadable`), never anything else."""
    import threading

    data = sample.read_bytes()
    path = tmp_path / "rewritten.nb"
    path.write_bytes(data)
    stop = threading.Event()

    def rewrite():
        while not stop.is_set():
            with open(path, "r+b") as f:
                f.truncate(len(data) // 3)
                f.seek(0)
                f.write(data)

    writer = threading.Thread(target=rewrite)
    writer.start()
    seen = set()
    try:
        for _ in range(40):
            try:
                seen.add(nbg_lab.parse(path).sha256 == nbg_lab.parse(data).sha256)
            except nbg_lab.NbgError as e:
                assert e.code != "internal-panic", e
                seen.add(e.code)
    finally:
        stop.set()
        writer.join()
    assert seen
