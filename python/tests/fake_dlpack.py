# SPDX-License-Identifier: Apache-2.0
"""A DLPack producer that labels a NumPy array's memory as CUDA memory, so that
the module's device checks and its GPU dispatch can be reached on a machine
without a GPU (no kernel may run on it: tests use it only where none can)."""
import ctypes

import numpy as np


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype = ctypes.py_object
_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CODES = {"i": 0, "u": 1, "f": 2}
CUDA = 2


class FakeDeviceArray:
    """`array`'s memory, presented through DLPack as on device `device_type` (CUDA by default)."""

    def __init__(self, array, device_type=CUDA, device_id=0):
        self.array = np.ascontiguousarray(array)
        self.device = (device_type, device_id)
        self._keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        a = self.array
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        managed = _Managed()
        managed.dl_tensor = _Tensor(a.ctypes.data, _Device(*self.device), a.ndim,
                                    _DataType(_CODES[a.dtype.kind], a.dtype.itemsize * 8, 1), shape, None, 0)
        self._keep += [shape, managed]  # alive as long as this object
        return _capsule(ctypes.addressof(managed), b"dltensor", None)
