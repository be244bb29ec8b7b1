"""The lint engine, its command line, configuration and output formats."""
