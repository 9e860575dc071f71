"""Model providers: the catalogue. Every profile is a row of profiles.yaml, validated and
registered by the shared kit (hermes_agent.kits.model_catalogue)."""

from pathlib import Path

from hermes_agent.kits.model_catalogue import register_catalogue

PROFILES = Path(__file__).with_name("profiles.yaml")


def register(ctx):
    register_catalogue(ctx, PROFILES)
