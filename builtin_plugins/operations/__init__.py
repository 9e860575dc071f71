"""Builtin plugin: the operations commands (docs/operations.md). Each command is a module of
its own, imported only when it runs: :mod:`.backup_cmd` (``backup``, ``restore``),
:mod:`.status_cmd`, :mod:`.logs_cmd`, :mod:`.insights_cmd`, :mod:`.completion_cmd`,
:mod:`.update_cmd`. The plugin registers nothing else."""
