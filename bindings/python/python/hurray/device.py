"""Device constants: ``Device(kind, 0, "standard")`` for each of the nine kinds.

They are descriptions, not allocations: a tensor built "on" ``cuda`` by the
construction functions still holds host memory.
"""

from hurray._native import Device, _DEVICES

__all__ = ['cpu', 'cuda', 'rocm', 'metal', 'vulkan', 'webgpu', 'hexagon', 'level_zero', 'opencl']

cpu: Device = _DEVICES["cpu"]
cuda: Device = _DEVICES["cuda"]
rocm: Device = _DEVICES["rocm"]
metal: Device = _DEVICES["metal"]
vulkan: Device = _DEVICES["vulkan"]
webgpu: Device = _DEVICES["webgpu"]
hexagon: Device = _DEVICES["hexagon"]
level_zero: Device = _DEVICES["level_zero"]
opencl: Device = _DEVICES["opencl"]
