"""The package under test is the installed wheel, with its stubs and bundled kernel."""

import os
from pathlib import Path

import execkit
from execkit import _native

REPO_PYTHON = Path(__file__).resolve().parents[1]


def test_imported_from_the_installed_wheel_not_the_source_tree():
    package = Path(execkit.__file__).resolve().parent
    assert REPO_PYTHON not in package.parents, package
    assert "site-packages" in package.parts, package


def test_native_module_is_an_abi3_extension():
    assert Path(_native.__file__).name.endswith(".abi3.so"), _native.__file__


def test_wheel_carries_type_stubs_and_py_typed():
    package = Path(execkit.__file__).parent
    for name in ("py.typed", "__init__.pyi", "_native.pyi"):
        assert (package / name).is_file(), name


def test_wheel_carries_an_executable_js_kernel():
    kernel = Path(execkit.__file__).parent / "bin" / "execkit-js-kernel"
    assert os.access(kernel, os.X_OK), kernel


def test_version_and_formats():
    assert execkit.__version__ == _native.__version__
    assert execkit.FORMATS == ("mcp", "openai", "anthropic", "gemini")
