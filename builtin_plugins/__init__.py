"""Builtin plugins: the product's own capabilities, loaded through the same public API as
third-party plugins. Each sub-package has a plugin.yaml, which also declares what the kernel
needs without importing the plugin: ``essential``, ``cli_commands`` and ``config_sections``.
"""
