"""``hermes_agent.cli``: the ``hermes`` command line, the shell on top of every layer."""
