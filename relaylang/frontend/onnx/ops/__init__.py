"""The converters, one module per family of ONNX operators; importing this package
registers them all (`registry._load`)."""
from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")
