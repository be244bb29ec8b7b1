"""Capture for PrecisionDebugger: API wrappers (L1), module hooks (L0), device statistics, the step session."""
