"""The espeak-ng engine: the text goes in on stdin (never as an argument), a WAV file comes
out. ``speed`` scales espeak's default 175 words a minute."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hermes_agent.kits.media import MediaError

WORDS_PER_MINUTE = 175
TIMEOUT = 120.0
INSTALL = ("install espeak-ng (Debian/Ubuntu: apt-get install espeak-ng; macOS: brew install "
           "espeak-ng)")


def program() -> str:
    return shutil.which("espeak-ng") or shutil.which("espeak") or ""


class EspeakTTS:
    name = "espeak"
    display_name = "espeak-ng (local)"
    output_format = "wav"

    def is_available(self) -> bool:
        return bool(program())

    def unavailable_reason(self) -> str:
        return "" if program() else f"the espeak-ng program is not installed: {INSTALL}"

    def synthesize(self, text: str, output_path: Path, *, voice: str = "", model: str = "",
                   speed: float | None = None, instructions: str = "") -> Path:
        binary = program()
        if not binary:
            raise MediaError(f"espeak-ng is not installed: {INSTALL}", "missing_dependency")
        command = [binary, "--stdin", "-w", str(output_path)]
        if voice:
            command += ["-v", voice]
        if speed is not None:
            command += ["-s", str(max(80, min(500, round(WORDS_PER_MINUTE * speed))))]
        try:
            done = subprocess.run(command, input=text.encode(), capture_output=True,
                                  timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise MediaError(f"espeak-ng took more than {TIMEOUT:.0f}s", "http") from None
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip()[:300]
            hint = " (list the voices with `espeak-ng --voices`)" if voice else ""
            raise MediaError(f"espeak-ng failed: {detail or f'exit {done.returncode}'}{hint}",
                             "invalid" if voice else "http")
        return output_path
