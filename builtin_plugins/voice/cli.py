"""`hermes voice [status] | speak TEXT | transcribe FILE`: the providers tts.provider and
stt.provider select, run directly, so a user can check a key, a server or espeak-ng before a
chat relies on them, and transcribe an audio file."""

from __future__ import annotations

import json
from pathlib import Path

import click
from hermes_agent.kits.media import MediaError, opus_converter
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .speech import SpeechService


@click.group(cls=ListingGroup, default="status")
def voice() -> None:
    """Text to speech (tts.provider) and speech to text (stt.provider)."""


def _state(service: SpeechService, slot: str) -> str:
    try:
        engine = service.tts() if slot == "tts" else service.stt()
    except MediaError as exc:
        return f"not ready: {exc}"
    return f"{engine.name} (ready)"


@voice.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """Which providers are selected and installed, and whether they can run."""
    kernel = cli_kernel()
    service = SpeechService(kernel)
    data = {"tts": _state(service, "tts"), "stt": _state(service, "stt"),
            "reply_mode": service.reply_mode(), "opus_converter": opus_converter() or None,
            "installed": {slot: sorted(kernel.slots.providers.get(slot, {}))
                          for slot in ("tts", "stt")}}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"tts  {data['tts']}\nstt  {data['stt']}")
    click.echo(f"voice.reply_mode {data['reply_mode']} · Ogg/Opus converter: "
               f"{data['opus_converter'] or 'none (apt-get install opus-tools or ffmpeg)'}")
    for slot, names in data["installed"].items():
        click.echo(f"installed {slot}: {', '.join(names) or 'none'}")


@voice.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--provider", help="The tts provider (default: tts.provider).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write (default: $HERMES_HOME/cache/audio/...).")
@click.option("--platform", default="", help="Write for this platform (telegram: Ogg/Opus).")
def speak(text: tuple[str, ...], provider: str | None, output: Path | None,
          platform: str) -> None:
    """Speak TEXT into an audio file and print its path."""
    service = SpeechService(cli_kernel())
    try:
        spoken = service.speak(" ".join(text), platform, output_path=output, provider=provider)
    except MediaError as exc:
        raise click.ClickException(f"[{exc.kind}] {exc}") from None
    click.echo(f"{spoken.path}  ({spoken.provider}, {spoken.extra.get('format') or '?'})")


@voice.command()
@click.argument("audio", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def transcribe(audio: Path) -> None:
    """Print the text spoken in an audio file (stt.provider)."""
    try:
        click.echo(SpeechService(cli_kernel()).transcribe(audio))
    except MediaError as exc:
        raise click.ClickException(f"[{exc.kind}] {exc}") from None
