"""msprobe-kit's dynamic side: seeding, capture, gradient probe and compare; imported by instrumented code."""

__version__ = "0.1.0"
