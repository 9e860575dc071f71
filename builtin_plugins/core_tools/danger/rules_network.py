"""Firewalls and the network: opening the firewall (``firewall_flush``) and cutting the machine
off the network (``network_lockout``: an interface down, its addresses flushed, the default
route deleted, a firewall that drops everything or SSH, networking or SSH stopped).

A lock-out is the one mistake a remote user cannot undo from where they sit: hermes and its
user may be reaching the machine over that very network. ``ip``, ``nmcli`` and git-style
tools accept abbreviations (``ip l s eth0 down``, ``nmcli n off``): verbs are matched by
prefix, as the tools match them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .rules_files import short_flags
from .site import Site

#: services whose stopping takes the network or remote logins away (``.service``/``.socket``
#: and case ignored)
NETWORK_UNITS = frozenset({
    "networkmanager", "network-manager", "networking", "network", "systemd-networkd",
    "wpa_supplicant", "dhcpcd", "dhclient", "connman", "iwd", "netctl", "ssh", "sshd",
    "openssh", "openssh-server", "tailscaled", "zerotier-one"})
#: service verbs that leave it stopped (``restart`` brings it back)
_STOPPING = frozenset({"stop", "disable", "mask", "kill"})


def network_unit(name: str) -> bool:
    unit = name.casefold().removesuffix(".service").removesuffix(".socket")
    return unit in NETWORK_UNITS or unit.startswith("wg-quick@")


#: targets that leave no network or logins (single-user mode)
_RESCUE = frozenset({"rescue", "emergency", "rescue.target", "emergency.target",
                     "runlevel1.target"})


def stops_network(verb: str, units: list[str]) -> bool:
    """``systemctl stop sshd``, ``service networking stop``: a network or SSH service stopped;
    ``systemctl rescue``, ``isolate emergency.target``: single-user mode, with neither."""
    return (verb in _STOPPING and any(network_unit(u) for u in units)
            or verb in ("rescue", "emergency")
            or verb == "isolate" and any(u.casefold() in _RESCUE for u in units))


def _abbrev(word: str, full: str, shortest: int = 1) -> bool:
    """``word`` is ``full`` or an abbreviation the tool accepts (``ip l`` is ``ip link``)."""
    return len(word) >= shortest and full.startswith(word)


# ------------------------------------------------------------------ firewalls
_DROPS = frozenset({"DROP", "REJECT"})
_LOCKOUT_CHAINS = frozenset({"INPUT", "OUTPUT"})
#: iptables options that narrow a rule to some traffic (an interface, -i/-o, does not)
_NARROWING = frozenset({"-s", "--source", "--src", "-d", "--destination", "--dst", "-p",
                        "--protocol", "-m", "--match", "--sport", "--source-port", "--dport",
                        "--destination-port", "--dports", "--sports", "--uid-owner",
                        "--state", "--ctstate"})
_SSH_PORT = re.compile(r"(?i)^(?:22|ssh)(?:$|[,:/])|,(?:22|ssh)(?:$|[,:])")


def iptables(site: Site, args: list[str]) -> None:
    """``-F/-X/-Z`` and ``-P ... ACCEPT`` open it; ``-P INPUT DROP``, a rule dropping all input
    or output (``-A INPUT -j DROP``) or SSH (``--dport 22 -j DROP``) lock the machine out."""
    options = [a for a in args if a.startswith("-")]
    flags = short_flags([o for o in options if not o.startswith("--")])
    if any(c in flags for c in "FXZ") or {"--flush", "--delete-chain", "--zero"} & set(options):
        site.add("firewall_flush")
    upper = [a.upper() for a in args]
    chain = target = ""
    for k, a in enumerate(args):
        if a in ("-P", "--policy"):
            if "ACCEPT" in upper[k + 1:k + 3]:
                site.add("firewall_flush")
            if upper[k + 1:k + 2] and upper[k + 1] in _LOCKOUT_CHAINS and (
                    upper[k + 2:k + 3] and upper[k + 2] in _DROPS):
                site.add("network_lockout")
        elif a in ("-A", "--append", "-I", "--insert") and k + 1 < len(args):
            chain = upper[k + 1]
        elif a in ("-j", "--jump") and k + 1 < len(args):
            target = upper[k + 1]
    if chain not in _LOCKOUT_CHAINS or target not in _DROPS:
        return
    ports = [args[k + 1] for k, a in enumerate(args[:-1])
             if a in ("--dport", "--destination-port", "--dports")]
    if not any(a in _NARROWING for a in args) or any(_SSH_PORT.search(p) for p in ports):
        site.add("network_lockout")


_NFT_LOCKOUT = re.compile(r"\bpolicy\s+drop\b|\b(?:add|insert)\s+rule\s+(?:\S+\s+)?\S+\s+"
                          r"(?:input|output)\s+(?:counter\s+)?(?:drop|reject)\b")
_NFT_OTHER_HOOK = re.compile(r"\bhook\s+(?:forward|prerouting|postrouting|ingress|egress)\b")


def nft(site: Site, args: list[str]) -> None:
    words = [a.lower() for a in args if not a.startswith("-")]
    text = " ".join(words)
    if "flush" in words or re.search(r"\bdelete (?:table|chain|ruleset)\b", text):
        site.add("firewall_flush")
    if _NFT_LOCKOUT.search(text) and not _NFT_OTHER_HOOK.search(text):
        site.add("network_lockout")


def ufw(site: Site, args: list[str]) -> None:
    """``disable``/``reset``/``default allow`` open it; ``enable`` (ufw itself warns it may
    cut SSH), ``default deny``/``reject`` of incoming or outgoing traffic and denying or
    un-allowing SSH lock the machine out."""
    words = [a.casefold() for a in args if not a.startswith("-")]
    if not words or "--dry-run" in args:
        return
    direction = words[2] if len(words) > 2 else "incoming"
    if words[0] in ("disable", "reset") or words[:2] == ["default", "allow"] and (
            _abbrev(direction, "incoming")):
        site.add("firewall_flush")
    ssh = any(w in ("22", "ssh", "openssh") or w.startswith("22/") for w in words[1:])
    denies_all = words[0] == "default" and words[1:2] in (["deny"], ["reject"]) and not (
        _abbrev(direction, "routed"))
    denies_ssh = ssh and (words[0] in ("deny", "reject") or words[:2] == ["delete", "allow"])
    if words[0] == "enable" or denies_all or denies_ssh:
        site.add("network_lockout")


_FIREWALLD_CUTS = re.compile(r"(?i)^--(?:panic-on$|set-default-zone=(?:drop|block)$|"
                             r"set-target=(?:drop|reject|%%reject%%)$|"
                             r"remove-service=ssh$|remove-port=22(?:/tcp)?$)")


def firewall_cmd(site: Site, args: list[str]) -> None:
    """firewalld: ``--panic-on`` (all traffic dropped), the ``drop``/``block`` zone as the
    default, a zone's target ``DROP``, SSH removed."""
    joined = [f"{a}={b}" for a, b in zip(args, args[1:])  # --remove-service ssh
              if a.startswith("--") and "=" not in a and not b.startswith("-")]
    if any(_FIREWALLD_CUTS.match(a) for a in [*args, *joined]):
        site.add("network_lockout")


def pfctl(site: Site, args: list[str]) -> None:
    if "-d" in args or any(a.startswith("-F") for a in args):
        site.add("firewall_flush")


# ------------------------------------------------------------------ interfaces and routes
#: ``ip``'s global options whose value is the next word
_IP_VALUED = frozenset({"-n", "-netns", "-b", "-batch", "-rc", "-rcvbuf", "-l", "-loops",
                        "-f", "-family"})
_DEFAULT_ROUTES = frozenset({"default", "0.0.0.0/0", "0/0", "::/0"})
#: route and rule types that send packets nowhere
_NOWHERE = frozenset({"blackhole", "unreachable", "prohibit"})


def ip(site: Site, args: list[str]) -> None:
    """``ip link set IF down|netns``, ``ip link delete``, ``ip addr flush|del``,
    ``ip route del default``, ``ip route flush`` (not ``flush cache``), a default route to
    ``blackhole``/``unreachable``/``prohibit``, ``ip rule add prohibit``; abbreviated or not."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _IP_VALUED else 1
    words = args[i:]
    if len(words) < 2:
        return
    obj, verb, rest = words[0], words[1], words[2:]
    if _abbrev(obj, "link"):
        cuts = (_abbrev(verb, "set") or _abbrev(verb, "change")) and bool(
            {"down", "netns"} & set(rest)) or _abbrev(verb, "delete")
    elif _abbrev(obj, "address"):
        cuts = _abbrev(verb, "flush") or _abbrev(verb, "delete")
    elif _abbrev(obj, "route"):
        cuts = (_abbrev(verb, "delete") and bool(_DEFAULT_ROUTES & set(rest))
                or _abbrev(verb, "flush") and rest[:1] != ["cache"]
                or bool(_NOWHERE & set(rest) and _DEFAULT_ROUTES & set(rest)))
    elif _abbrev(obj, "rule", 2):  # ip rule add prohibit: every packet refused
        cuts = _abbrev(verb, "add") and bool(_NOWHERE & set(rest))
    else:
        return
    if cuts:
        site.add("network_lockout")


def ifconfig(site: Site, args: list[str]) -> None:
    if "down" in args:
        site.add("network_lockout")


def ifdown(site: Site, args: list[str]) -> None:
    if args and not {"-n", "--no-act", "-h", "--help", "-V", "--version"} & set(args):
        site.add("network_lockout")


def route(site: Site, args: list[str]) -> None:
    """``route del default`` (``delete`` on BSD and macOS), ``route flush``."""
    words = [a for a in args if not a.startswith("-")]
    if words[:1] in (["del"], ["delete"]) and (
            "default" in words or "0.0.0.0" in words or "0.0.0.0/0" in words) or (
            words[:1] == ["flush"]):
        site.add("network_lockout")


def dhcp_client(site: Site, args: list[str]) -> None:
    """``dhclient -r``/``-x``, ``dhcpcd -k``/``--release``/``-x``: the address is given up."""
    if {"-r", "-x", "-k", "--release", "--exit"} & set(args):
        site.add("network_lockout")


def tc(site: Site, args: list[str]) -> None:
    """``tc qdisc add dev eth0 root netem loss 100%``: every packet dropped."""
    for k, a in enumerate(args):
        value = args[k + 1:k + 3] if a == "loss" else []
        if value[:1] == ["random"]:  # loss random 100%
            value = value[1:]
        if value[:1] in (["100%"], ["100"]):
            site.add("network_lockout")


_NMCLI_VALUED = frozenset({"-f", "--fields", "-g", "--get-values", "-m", "--mode", "-c",
                           "--colors", "-e", "--escape", "-w", "--wait"})


def nmcli(site: Site, args: list[str]) -> None:
    """``nmcli networking off``, ``radio ... off``, ``connection down|delete``,
    ``device disconnect|down|delete`` (``nmcli n off``, ``nmcli d dis eth0``)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _NMCLI_VALUED else 1
    words = [w.casefold() for w in args[i:]]
    if len(words) < 2:
        return
    obj, verb = words[0], words[1]
    if _abbrev(obj, "networking") or _abbrev(obj, "radio"):
        cuts = _abbrev(words[-1], "off", 2)
    elif _abbrev(obj, "connection") or _abbrev(obj, "device"):
        cuts = verb.startswith("d")  # down, delete, disconnect
    else:
        return
    if cuts:
        site.add("network_lockout")


def _rfkill(site: Site, args: list[str]) -> None:
    if [a for a in args if not a.startswith("-")][:1] == ["block"]:
        site.add("network_lockout")


def _networksetup(site: Site, args: list[str]) -> None:
    """macOS: ``-setairportpower en0 off``, ``-setnetworkserviceenabled Wi-Fi off``."""
    if args and args[0].casefold().startswith("-set") and "off" in (a.casefold() for a in args):
        site.add("network_lockout")


def _vpn_down(site: Site, args: list[str]) -> None:
    """``tailscale down|logout``, ``wg-quick down wg0``: the way in may be that VPN."""
    if [a for a in args if not a.startswith("-")][:1] in (["down"], ["logout"]):
        site.add("network_lockout")


NETWORK_RULES: dict[str, Callable[[Site, list[str]], None]] = {
    "iptables": iptables, "ip6tables": iptables, "iptables-legacy": iptables,
    "iptables-nft": iptables, "ip6tables-legacy": iptables, "ip6tables-nft": iptables,
    "ebtables": iptables, "arptables": iptables, "nft": nft, "ufw": ufw, "pfctl": pfctl,
    "ip": ip, "ifconfig": ifconfig, "ifdown": ifdown, "route": route, "nmcli": nmcli,
    "rfkill": _rfkill, "networksetup": _networksetup, "tailscale": _vpn_down,
    "wg-quick": _vpn_down, "firewall-cmd": firewall_cmd, "dhclient": dhcp_client,
    "dhcpcd": dhcp_client, "tc": tc}
