"""MindSpore capture: API wrappers (L1), cell hooks (L0), statistics and the capture session."""
