# SPDX-License-Identifier: Apache-2.0
"""The package as installed: its public names, its type stubs for editors,
and what the build put in it."""
import os

import fusekit as fk


def test_every_public_name_exists():
    for name in fk.__all__:
        assert hasattr(fk, name), name


def test_stubs_and_the_typed_marker_are_installed():
    folder = os.path.dirname(fk.__file__)
    assert os.path.exists(os.path.join(folder, "py.typed"))
    stub = open(os.path.join(folder, "_core.pyi")).read()  # nanobind.stubgen, at build time
    for name in ("def hidden_layer", "def reduce", "def fit", "def predict", "class GdOptions", "class FitStatus",
                 "def recommended(**fields) -> GdOptions", "def text(self) -> str"):
        assert name in stub, name


def test_the_version_is_the_packages():
    from importlib.metadata import metadata, version
    assert fk.__version__ == version("fusekit")
    meta = metadata("fusekit")
    assert meta["License"] or meta["License-Expression"]
    assert any("Programming Language :: Python :: 3" in c for c in meta.get_all("Classifier") or [])


def test_the_build_says_what_it_holds():
    assert isinstance(fk.has_cuda, bool) and isinstance(fk.has_half_types, bool)
    assert fk.cuda_device_count() >= 0
    if not fk.has_half_types:  # the CPU-only build: float16 is refused with the reason
        import numpy as np
        import pytest
        with pytest.raises(TypeError, match="no half types"):
            fk.hidden_layer(np.zeros(4, np.uint8), np.zeros(4, np.float16))


def test_the_package_imports_where_the_gpu_module_cannot_load_and_says_why():
    # As on a machine without the CUDA libraries a GPU build links: the GPU
    # module's import fails; the CPU module serves, and has_cuda says False.
    import subprocess
    import sys
    code = """
import importlib.abc, sys
class NoGpu(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == 'fusekit._core_cuda':
            raise ImportError('libcublas.so.13: cannot open shared object file: No such file or directory')
        return None
sys.meta_path.insert(0, NoGpu())
import numpy as np, fusekit as fk
assert fk.has_cuda is False, fk.has_cuda
assert 'libcublas.so.13' in fk.cuda_unavailable and 'reinstall' in fk.cuda_unavailable, fk.cuda_unavailable
assert fk.sum(np.ones(1000, np.float32)) == 1000
sys.path.insert(0, sys.argv[1])
from fake_dlpack import FakeDeviceArray
try:
    fk._core.reduce(FakeDeviceArray(np.ones(4, np.float32)), FakeDeviceArray(np.zeros((), np.float32)), 0, None,
                    'deterministic', 0)
except ValueError as e:
    assert 'libcublas.so.13' in str(e), e
else:
    raise AssertionError('a CUDA array must be refused')
print('ok')
"""
    out = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    if not fk.has_cuda:
        assert fk.cuda_unavailable  # a CPU-only build says so too


def test_the_packages_license_and_version_are_the_projects():
    import re
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    if not os.path.exists(os.path.join(root, "CMakeLists.txt")):
        return  # the tests of an unpacked sdist: no repository around them
    with open(os.path.join(root, "LICENSE")) as a, open(os.path.join(root, "python", "LICENSE")) as b:
        assert a.read() == b.read()  # the sdist's copy
    cmake = open(os.path.join(root, "CMakeLists.txt")).read()
    assert re.search(r"project\(fusekit\s+VERSION (\S+)", cmake).group(1) == fk.__version__
