"""Commands whose job is to print a stored secret: a CLI's token (``gh auth token``), cloud
credentials (``aws configure get aws_secret_access_key``), a secret store's entry (``pass
show``, ``vault kv get``, ``kubectl get secret -o yaml``), a decrypted file (``sops -d``,
``gpg -d``) or a private key (``gpg --export-secret-keys``). What they print is the secret, so
running one is ``credential_read``, and piping or substituting its output into a network tool is
``secret_upload``.

The table is data: per tool, the options that take a value (so that a value is never read as a
sub-command: ``gh --hostname token auth status``) and the printers, each a sub-command path
with conditions on the options and on the first operand after the path."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .site import OPAQUE, Site, base_name

#: an option given without ``=false``/``=0`` (``--raw``, ``--raw=true``)
_SET = re.compile(r"(?i)(?!(?:false|0)$).*")
#: a configuration setting holding a secret (``aws configure get aws_secret_access_key``)
_SECRET_SETTING = re.compile(r"(?i)secret|token|key|pass|auth")


@dataclass(frozen=True)
class Printer:
    """A command line that prints a secret: the sub-command ``path`` (``*`` stands for any
    word that is not one of the tool's own sub-commands, a trailing ``*`` for a prefix), one of
    the ``options`` given (none listed: no option needed; a trailing ``*`` matches
    abbreviations; a pattern the value must match), none of the ``unless`` options that keep
    it quiet (``pass generate -c``), and an operand after the path."""

    path: tuple[str, ...] = ()
    options: tuple[tuple[str, re.Pattern[str]], ...] = ()
    operand: re.Pattern[str] | None = None  # the first word after the path must contain it
    needs_operand: bool = False
    unless: tuple[tuple[str, re.Pattern[str]], ...] = ()


@dataclass(frozen=True)
class Tool:
    valued: frozenset[str]  # options whose value follows (``--x=v`` is always one word)
    printers: tuple[Printer, ...]
    valued_after: frozenset[str] | None = None  # after the sub-command, when they differ
    long_single_dash: bool = False  # ``-address=x`` is one option (Go's flag package)
    commands: frozenset[str] = frozenset()  # its own sub-commands (see ``*`` in a path)


def _p(*path: str, options: tuple[str, ...] = (), value: re.Pattern[str] = _SET,
       operand: str | None = None, needs_operand: bool = False,
       unless: tuple[str, ...] = (), unless_value: re.Pattern[str] = _SET) -> Printer:
    return Printer(path, tuple((o, value) for o in options),
                   re.compile(operand) if operand else None, needs_operand,
                   tuple((o, unless_value) for o in unless))


def _v(*options: str) -> frozenset[str]:
    return frozenset(options)


_SHOW_TOKEN = ("-t", "--show-token")
_FORGE = Tool(_v("-h", "--hostname", "-R", "--repo", "-p", "--git-protocol"), (
    _p("auth", "token"), _p("auth", "status", options=_SHOW_TOKEN),
    _p("config", "get", operand=_SECRET_SETTING.pattern)))
_GCLOUD_PRINTERS = (("auth", "print-access-token"), ("auth", "print-identity-token"),
                    ("auth", "application-default", "print-access-token"),
                    ("config", "config-helper"), ("secrets", "versions", "access"))
_GCLOUD = Tool(_v("--project", "--account", "--configuration", "--format", "--verbosity",
                  "--billing-project", "--impersonate-service-account", "--flags-file",
                  "--trace-token", "--filter", "--secret", "--audiences"),
               tuple(_p(*track, *path) for path in _GCLOUD_PRINTERS
                     for track in ((), ("alpha",), ("beta",))))
_AZ = Tool(_v("--subscription", "-o", "--output", "--query", "--resource", "--resource-type",
              "--scope", "--tenant", "-t", "--vault-name", "-n", "--name", "--id"), (
    _p("account", "get-access-token"), _p("keyvault", "secret", "show")))
_AWS_DECRYPTED = ("--with-decryption",)
_AWS = Tool(_v("--profile", "--region", "--output", "--endpoint-url", "--query", "--color",
               "--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout",
               "--cli-binary-format", "--domain", "--domain-owner", "--role-arn",
               "--role-session-name", "--secret-id", "--name", "--names", "--path",
               "--format", "--duration-seconds", "--serial-number", "--token-code"), (
    _p("configure", "get", operand=_SECRET_SETTING.pattern),
    _p("configure", "export-credentials"), _p("ecr", "get-login-password"),
    _p("ecr", "get-login"), _p("ecr", "get-authorization-token"),
    _p("ecr-public", "get-login-password"), _p("ecr-public", "get-authorization-token"),
    _p("codeartifact", "get-authorization-token"), _p("sts", "get-session-token"),
    _p("sts", "get-federation-token"), _p("sts", "assume-role"),
    _p("sts", "assume-role-with-web-identity"), _p("sts", "assume-role-with-saml"),
    _p("secretsmanager", "get-secret-value"), _p("secretsmanager", "batch-get-secret-value"),
    _p("ssm", "get-parameter", options=_AWS_DECRYPTED),
    _p("ssm", "get-parameters", options=_AWS_DECRYPTED),
    _p("ssm", "get-parameters-by-path", options=_AWS_DECRYPTED)))
#: ``kubectl get`` output formats that print a secret's data (``name``, ``wide`` do not)
_K8S_DUMP = re.compile(r"(?!(?:name|wide)$).+")
_K8S_SECRET = r"(?i)(?:^|,)secrets?(?:\.[\w.]*)?(?:/|,|$)"  # resource names ignore case
_KUBECTL_PRINTERS = (
    _p("config", "view", options=("--raw",)), _p("create", "token"),
    _p("get", options=("-o", "--output"), value=_K8S_DUMP, operand=_K8S_SECRET),
    _p("get", options=("--template",), operand=_K8S_SECRET),
    _p("get", options=("--raw",), operand=r"/secrets(?:/|$)"),  # --raw PATH
    _p("get", options=("--raw",), value=re.compile(r".*/secrets(?:/.*)?")))  # --raw=PATH
_KUBECTL = Tool(_v("-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user",
                   "-s", "--server", "--token", "--as", "--as-group", "--as-uid", "-l",
                   "--selector", "-o", "--output", "--field-selector", "--template", "-c",
                   "--container", "-f", "--filename", "--request-timeout", "--cache-dir",
                   "--certificate-authority", "--client-key", "--client-certificate",
                   "--tls-server-name", "--username", "--password", "-v", "--v", "--vmodule",
                   "--log-dir", "--sort-by", "--chunk-size", "--duration",
                   "--audience", "--bound-object-kind", "--bound-object-name"),
                _KUBECTL_PRINTERS)
_OC = Tool(_KUBECTL.valued, (*_KUBECTL_PRINTERS, _p("whoami", options=_SHOW_TOKEN)))
#: git's credential helpers' own options whose value follows
_HELPER_VALUED = _v("--file", "--timeout", "--socket")
_CREDENTIAL_HELPER = Tool(_HELPER_VALUED, (_p("get"),))
#: git's options before its sub-command whose value follows, and its helpers'
_GIT = Tool(_HELPER_VALUED | _v("-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                "--config-env", "--super-prefix", "--list-cmds",
                                "--attr-source"), (
    _p("credential", "fill"), _p("credential-*", "get")))
_SECURITY = Tool(_v("-p"), (
    _p("find-generic-password", options=("-w", "-g")),
    _p("find-internet-password", options=("-w", "-g")),
    _p("dump-keychain", options=("-d",)),
    # export: every item by default; only certificates and public keys are no secret
    _p("export", unless=("-t",), unless_value=re.compile(r"(?i)certs|pubkeys"))),
    valued_after=_v(*(f"-{c}" for c in "acCDGjlsrtdPpkfo")))
_PASS_COMMANDS = _v("init", "ls", "list", "find", "search", "show", "grep", "insert", "add",
                    "edit", "generate", "rm", "remove", "delete", "mv", "rename", "cp", "copy",
                    "git", "help", "version", "otp")
_PASS = Tool(frozenset(), (
    _p("show", needs_operand=True), _p("*"), _p("grep"), _p("otp", needs_operand=True),
    _p("generate", needs_operand=True, unless=("-c", "--clip"))),  # prints the new password
    commands=_PASS_COMMANDS)
_GOPASS_COMMANDS = _PASS_COMMANDS | _v(
    "alias", "audit", "cat", "clone", "config", "convert", "create", "env", "fsck", "fscopy",
    "history", "link", "merge", "mounts", "move", "process", "pwgen", "rcs", "recipients",
    "setup", "sum", "sync", "templates", "unclip", "update", "age", "completion")
_GOPASS = Tool(frozenset(), (
    _p("show", needs_operand=True), _p("*"), _p("cat", needs_operand=True),
    _p("otp", needs_operand=True), _p("find", needs_operand=True),  # one match is shown
    _p("search", needs_operand=True),
    _p("env", needs_operand=True)), commands=_GOPASS_COMMANDS)
_OP = Tool(_v("--account", "--config", "--encoding", "--format", "--session", "--vault",
              "--fields", "--out-file", "-o", "--in-file", "-i", "--categories", "--tags"), (
    _p("read"), _p("inject"), _p("item", "get", options=("--reveal", "--fields", "--otp")),
    _p("document", "get"), _p("get", "item"), _p("get", "document"), _p("get", "totp"),
    _p("run", options=("--no-masking",)), _p("signin", options=("--raw",))))  # session token
_BW = Tool(_v("--session", "--search", "--folderid", "--collectionid", "--organizationid",
              "--url", "--format", "--output", "--password", "--passwordenv",
              "--passwordfile", "--method", "--code", "--apikey-client-id"), (
    _p("get", operand=r"^(?:password|item|totp|notes)$"), _p("list", "items"), _p("export"),
    # they print the session key (``export BW_SESSION=...``, or alone with --raw)
    _p("unlock", unless=("--check",)), _p("login", unless=("--check",))))
_VAULT = Tool(_v("-address", "-namespace", "-ns", "-format", "-field", "-mount", "-version",
                 "-ca-cert", "-ca-path", "-client-cert", "-client-key", "-tls-server-name",
                 "-wrap-ttl", "-policy", "-ttl", "-role", "-display-name", "-header",
                 "-agent-address", "-mfa", "-output-policy", "-explicit-max-ttl", "-period",
                 "-metadata", "-use-limit", "-type", "-entity-alias", "-id", "-accessor",
                 "-method", "-path"), (
    _p("kv", "get"), _p("read"), _p("print", "token"), _p("token", "create"),
    _p("token", "lookup"), _p("login", unless=("-no-print", "--no-print"))),
    long_single_dash=True)
_SOPS = Tool(_v("--extract", "--output", "--input-type", "--output-type", "--kms", "--pgp",
                "--age", "--config", "--filename-override", "--set", "--gcp-kms",
                "--azure-kv", "--hc-vault-transit", "--indent", "--unencrypted-suffix"), (
    _p(options=("-d", "--decrypt")), _p("decrypt"), _p("exec-env"), _p("exec-file")))
_ANSIBLE_VAULT = Tool(_v("--vault-id", "--vault-password-file", "--vault-pass-file",
                         "--output", "--new-vault-id", "--new-vault-password-file"), (
    _p("view"), _p("decrypt")))
#: gpg takes any unambiguous abbreviation of a long option (``--export-secret-key``)
_GPG = Tool(_v("-o", "--output", "-r", "--recipient", "-u", "--local-user", "-R", "-f",
               "--recipient-file", "-z", "-N", "--homedir", "--default-key", "--keyring",
               "--secret-keyring", "--trustdb-name", "--passphrase", "--passphrase-file",
               "--passphrase-fd", "--pinentry-mode", "--keyserver", "--trust-model",
               "--cipher-algo", "--digest-algo", "--compress-algo", "--status-fd",
               "--logger-fd", "--command-fd", "--hidden-recipient", "--encrypt-to"), (
    _p(options=("--export-se*", "--dec*", "-d")),))
_AGE = Tool(_v("-o", "--output", "-i", "--identity", "-r", "--recipient", "-R",
               "--recipients-file"), (_p(options=("-d", "--decrypt")),))

SECRET_PRINTERS: dict[str, Tool] = {
    "gh": _FORGE, "glab": _FORGE, "gcloud": _GCLOUD, "az": _AZ, "aws": _AWS,
    # an app's config vars are mostly its secrets (DATABASE_URL, API keys)
    "heroku": Tool(_v("-a", "--app", "-r", "--remote"), (
        _p("auth:token"), _p("config"), _p("config:get"))),
    # npm 9 and later refuse to print protected settings; earlier ones print them
    "npm": Tool(_v("--userconfig", "--globalconfig", "--location", "-L", "--registry", "-w",
                   "--workspace", "--prefix", "--cache"),
                (_p("config", "get", operand=_SECRET_SETTING.pattern),
                 _p("c", "get", operand=_SECRET_SETTING.pattern))),
    "fly": Tool(_v("-a", "--app", "-t", "--access-token"), (_p("auth", "token"),)),
    "kubectl": _KUBECTL, "oc": _OC, "git": _GIT, "security": _SECURITY,
    "secret-tool": Tool(frozenset(), (_p("lookup"), _p("search"))),
    "pass": _PASS, "gopass": _GOPASS, "op": _OP, "bw": _BW,
    "lpass": Tool(_v("--color", "--field", "--sync"), (_p("show"), _p("export"))),
    "keyring": Tool(_v("-b", "--keyring-backend", "-p", "--keyring-path"), (_p("get"),)),
    "vault": _VAULT, "sops": _SOPS, "ansible-vault": _ANSIBLE_VAULT,
    "gpg": _GPG, "gpg2": _GPG, "age": _AGE, "rage": _AGE,
    "gpgsm": Tool(_GPG.valued, (_p(options=("--export-secret-key*",)),))}
SECRET_PRINTERS["flyctl"] = SECRET_PRINTERS["fly"]
#: credential helpers, by the start of their name (``docker-credential-pass get``)
_HELPERS = (("docker-credential-", _CREDENTIAL_HELPER), ("git-credential-", _CREDENTIAL_HELPER))


def _tool(name: str) -> Tool | None:
    tool = SECRET_PRINTERS.get(name)
    if tool is None and "-credential-" in name:
        tool = next((t for prefix, t in _HELPERS if name.startswith(prefix)), None)
    return tool


def _parse(tool: Tool, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """(the words that are not options or their values, options -> their values)."""
    words: list[str] = []
    options: dict[str, str] = {}
    k = 0
    while k < len(args):
        a, following = args[k], args[k + 1] if k + 1 < len(args) else ""
        valued = tool.valued if not words or tool.valued_after is None else tool.valued_after
        k += 1
        if a == "--":
            words.extend(args[k:])
            break
        if not a.startswith("-") or a == "-":
            words.append(a)
        elif a.startswith("--") or tool.long_single_dash:
            option, equals, value = a.partition("=")
            if not equals and option in valued:
                value, k = following, k + 1
            options[option] = value
        else:
            for j, letter in enumerate(a[1:], 2):
                option = "-" + letter
                if option in valued:  # -oyaml, -o=yaml, -o yaml
                    options[option] = a[j:].removeprefix("=") or following
                    k += 0 if a[j:] else 1
                    break
                options[option] = ""
    return words, options


def _given(options: dict[str, str], wanted: str, value: re.Pattern[str]) -> bool:
    if wanted.endswith("*"):
        return any(o.startswith(wanted[:-1]) and value.fullmatch(v) for o, v in options.items())
    return wanted in options and value.fullmatch(options[wanted]) is not None


def _matches(printer: Printer, tool: Tool, words: list[str], options: dict[str, str]) -> bool:
    if len(words) < len(printer.path):
        return False
    for wanted, word in zip(printer.path, words):
        if wanted == "*" and word in tool.commands or wanted != "*" and word != wanted and not (
                wanted.endswith("*") and word.startswith(wanted[:-1])):
            return False
    after = words[len(printer.path):]
    if printer.needs_operand and not after or printer.operand is not None and not (
            after and printer.operand.search(after[0])):
        return False
    if any(_given(options, o, v) for o, v in printer.unless):
        return False
    return not printer.options or any(_given(options, o, v) for o, v in printer.options)


def prints_secret(argv: list[str]) -> bool:
    """Whether the command ``argv`` prints a stored secret."""
    tool = _tool(base_name(argv[0])) if argv else None
    if tool is None:
        return False
    words, options = _parse(tool, argv[1:])
    return any(_matches(printer, tool, words, options) for printer in tool.printers)


def secret_printer(site: Site, argv: list[str]) -> None:
    """``credential_read`` for a command that prints a stored secret; run by ``xargs``, the
    operands it is handed count (``xargs pass show < names``)."""
    if prints_secret([*argv, OPAQUE] if site.via_xargs else argv):
        site.add("credential_read")
