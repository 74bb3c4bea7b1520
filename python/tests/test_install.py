"""The module is the installed wheel, typed and documented."""

import pathlib

import nbg_lab


def test_the_module_is_the_installed_wheel_not_the_source_tree():
    here = pathlib.Path(__file__).resolve().parents[1]
    installed = pathlib.Path(nbg_lab.__file__).resolve()
    assert here not in installed.parents, installed
    assert (installed.parent / "py.typed").is_file()
    assert (installed.parent / "__init__.pyi").is_file()


def test_every_public_name_has_a_docstring():
    for name in nbg_lab.__all__:
        if name.startswith("__"):
            continue
        doc = getattr(nbg_lab, name).__doc__
        assert doc and doc.strip(), name
    assert "Graph" in nbg_lab.parse.__doc__
