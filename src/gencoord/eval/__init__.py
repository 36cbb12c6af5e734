"""Experiments: configs, the runner, statistics, tables, figures and the report."""
