"""The 26 element types of the Hurray format, one :class:`hurray.Dtype` each.

Tier-1 types are also bound at the top of :mod:`hurray` (``hurray.float32 is
hurray.dtype.float32``); tier-2 types (``int4``, ``float8_e4m3``, ...) live only here.
"""

from hurray._native import Dtype, _DTYPES

__all__ = ['float16', 'bfloat16', 'float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'bool', 'float8_e4m3', 'float8_e5m2', 'float8_e8m0', 'float4_e2m1', 'float6_e2m3', 'float6_e3m2', 'float128', 'int4', 'uint4', 'int2', 'uint2', 'complex64', 'complex128']

float16: Dtype = _DTYPES["float16"]
bfloat16: Dtype = _DTYPES["bfloat16"]
float32: Dtype = _DTYPES["float32"]
float64: Dtype = _DTYPES["float64"]
int8: Dtype = _DTYPES["int8"]
uint8: Dtype = _DTYPES["uint8"]
int16: Dtype = _DTYPES["int16"]
uint16: Dtype = _DTYPES["uint16"]
int32: Dtype = _DTYPES["int32"]
uint32: Dtype = _DTYPES["uint32"]
int64: Dtype = _DTYPES["int64"]
uint64: Dtype = _DTYPES["uint64"]
bool: Dtype = _DTYPES["bool"]
float8_e4m3: Dtype = _DTYPES["float8_e4m3"]
float8_e5m2: Dtype = _DTYPES["float8_e5m2"]
float8_e8m0: Dtype = _DTYPES["float8_e8m0"]
float4_e2m1: Dtype = _DTYPES["float4_e2m1"]
float6_e2m3: Dtype = _DTYPES["float6_e2m3"]
float6_e3m2: Dtype = _DTYPES["float6_e3m2"]
float128: Dtype = _DTYPES["float128"]
int4: Dtype = _DTYPES["int4"]
uint4: Dtype = _DTYPES["uint4"]
int2: Dtype = _DTYPES["int2"]
uint2: Dtype = _DTYPES["uint2"]
complex64: Dtype = _DTYPES["complex64"]
complex128: Dtype = _DTYPES["complex128"]
