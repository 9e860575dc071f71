"""``hermes_agent.cli``: the ``hermes`` command line, the shell on top of every layer.

It drives the kernel through the facade (``from hermes_agent import ...``), the api and the
kits only. :mod:`.root` is the console script (``hermes_agent.cli.root:main``), the click
root; :mod:`.process` holds the run's kernel (the root context's object); :mod:`.commands`
and :mod:`.help_index` list the commands plugins declare, the listing cached;
:mod:`.argparse_bridge` runs plugins' argparse commands; :mod:`.prevalidated` regenerates
``prevalidated.json`` at build time (``python -m hermes_agent.cli.prevalidated``).
"""
