"""What the analyser knows while it walks a command: variables, aliases, the working
directory, files written so far, and the tool families it treats alike."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: nesting of substitutions and code strings judged before giving up ("can't tell")
MAX_DEPTH = 8
#: longest variable value followed (x=$x$x doubles it each time); longer ones are unknown
MAX_VALUE = 65536
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lynx",
                         "links", "w3m", "ftp", "tftp", "lftp"})
#: tools whose output is a transformation of their input: what comes out cannot be read
DECODERS = frozenset({"base64", "base32", "basenc", "xxd", "uudecode", "rev", "tr", "tac",
                      "gunzip", "zcat", "gzip", "bzcat", "bzip2", "bunzip2", "xz", "xzcat",
                      "unxz", "zstd", "zstdcat", "unzstd", "openssl", "iconv", "recode", "sed",
                      "awk", "gawk", "mawk", "perl", "cut", "paste", "od", "hexdump", "jq",
                      "gpg"})
#: tools that pass lines of their input through unchanged
SELECTORS = frozenset({"cat", "tee", "head", "tail", "sort", "uniq", "grep", "egrep", "fgrep",
                       "less", "more", "dos2unix", "unix2dos", "col", "fold"})
#: programs whose output is their own shell set-up code, meant to be eval'd or sourced (with
#: one of SETUP_WORDS, or always for the first group): the code comes from the installed
#: program, not from data in the command
SETUP_GENERATORS = frozenset({"ssh-agent", "dircolors", "keychain", "direnv", "pyenv", "rbenv",
                              "nodenv", "goenv", "jenv", "conda", "brew", "starship", "zoxide",
                              "fnm", "mise", "atuin", "opam", "thefuck", "gh", "kubectl", "helm",
                              "rustup", "poetry", "pip", "npm", "uv", "pipx", "just"})
SETUP_WORDS = frozenset({"init", "hook", "env", "shellenv", "completion", "completions",
                         "activate", "export", "--alias", "shell.bash", "shell.zsh", "-s"})
QUERIES = frozenset({"which", "whereis", "type", "command", "realpath", "readlink"})
WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
#: script paths that mean "read the code from stdin"
STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
#: options that name a file a command writes its output to
OUTPUT_OPTIONS = frozenset({"-o", "--output", "--output-file", "-out", "--out", "--outfile",
                             "--output-document"})
SSH_VALUED = frozenset({"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m",
                         "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B"})


Content = tuple[str, "str | None"]  # (marker, text) as returned by Analyser.producer


@dataclass
class Scope:
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, list[str]] = field(default_factory=dict)
    #: files written earlier in the text -> what was written (shared: files outlive subshells)
    files: dict[str, Content] = field(default_factory=dict)
    #: links made earlier in the text (``ln -s /dev/sda disk``): link -> what it points to
    links: dict[str, str] = field(default_factory=dict)
    #: what commands read on stdin when nothing in the text says (the writer of a >( ))
    stdin: "Content | None" = None
    #: file names ignore case (None: as the file system here does, see paths.folds_case)
    fold: bool | None = None

    def child(self) -> "Scope":
        return Scope(dict(self.env), self.cwd, dict(self.aliases), dict(self.arrays), self.files,
                     self.links, self.stdin, self.fold)

    def split(self, value: str) -> list[str]:
        """Word splitting of an unquoted expansion (by ``$IFS`` when the text sets it)."""
        ifs = self.env.get("IFS")  # unset: blanks
        if ifs is None or not ifs.strip():
            return value.split()
        return [w for w in re.split("[" + re.escape(ifs) + r"\s]+", value) if w]

    def separates(self, char: str) -> bool:
        return char.isspace() or char in self.env.get("IFS", "")
