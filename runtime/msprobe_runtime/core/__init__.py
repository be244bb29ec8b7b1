"""Framework-free parts of the runtime: config, naming, statistics records, writers."""
