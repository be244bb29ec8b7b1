"""msprobe-kit's static side: the hazard catalogue, lint rules, the lint engine and codemods."""

__version__ = "0.1.0"
