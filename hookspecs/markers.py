"""The pluggy markers of the ``hermes_agent`` project.

``hookspec`` marks a hook specification; ``hookimpl`` marks a plugin's implementation.
Plugin authors import ``hookimpl`` from :mod:`hermes_agent`.
"""

import pluggy

PROJECT_NAME = "hermes_agent"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
