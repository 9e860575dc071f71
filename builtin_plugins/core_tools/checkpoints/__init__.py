"""Checkpoints and rollback: the workspace is snapshotted in a shadow git repository before
the first file-changing tool call of each turn (docs/checkpoints.md)."""
