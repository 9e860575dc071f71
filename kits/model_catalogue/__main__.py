"""Owner: the builtin plugin `models`. ``python -m hermes_agent.kits.model_catalogue``:
regenerate the catalogue's doc table and plugin.yaml variables from profiles.yaml (in a
checkout)."""

from pathlib import Path

from .views import rewrite

print(rewrite(Path(__file__).resolve().parents[2]))
