"""msprobe-kit's dynamic side: seeding, capture, gradient probe and compare; imported by instrumented code."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`compare` and `compare_distributed`, imported on first use (instrumented scripts never pay for pandas)."""
    if name in ("compare", "compare_distributed"):
        from msprobe_runtime.core import compare as compare_package

        return getattr(compare_package, name)
    raise AttributeError(f"module 'msprobe_runtime' has no attribute '{name}'")
