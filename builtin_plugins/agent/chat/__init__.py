"""``hermes chat``: the interactive terminal front end of the agent loop."""
