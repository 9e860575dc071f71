"""Bundled plugins, one folder per plugin under a category folder.

These folders are data, not modules of this package: the kernel's discovery reads each
``plugin.yaml`` and imports the plugin by path, exactly as it does for plugins in
``$HERMES_HOME/plugins/``.
"""
