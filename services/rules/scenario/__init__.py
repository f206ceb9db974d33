"""Scenario files: the loader (format v1) and the runner that plays them through the engine."""
