"""Long calls release the GIL: another Python thread keeps running while they work."""

import threading
import time

import nbg_lab
from conftest import largest_public_file, missing


def test_coefficients_run_without_the_gil():
    """While another thread decodes a file's weights (about 0.15 s a call on the largest public
    file), this one is never stopped for a call's length: with the GIL held through the decode
    it would wait out each call whole."""
    path = largest_public_file()
    if path is None:
        missing("a public NBG file")
    graph = nbg_lab.parse(path)
    started = time.perf_counter()
    graph.coefficients()
    one = time.perf_counter() - started
    worker = threading.Thread(target=lambda: [graph.coefficients() for _ in range(4)])
    longest, last = 0.0, time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    assert longest < 0.5 * one, (longest, one)
