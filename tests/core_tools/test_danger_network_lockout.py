"""Cutting the machine off the network is asked about (``network_lockout``); looking is not.

A lock-out is what a remote user cannot undo from where they sit, so the analyser asks even
where the sandbox would let the command through. The ``ip``/``ifconfig``/``route`` shapes are
also run for real inside a throwaway network namespace (``unshare -rn``: its own loopback and
routes, nothing of the host's), to show each really takes the interface, its addresses or
the default route away and each neighbour leaves them.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from hermes_agent.builtin_plugins.core_tools.danger import analyse, dangerous, hardline

CWD = "/work/project"

#: command -> the keys it carries besides network_lockout
LOCKOUTS: dict[str, tuple[str, ...]] = {
    # interfaces and addresses
    "ip link set eth0 down": (), "ip link set dev eth0 down": (), "ip l s eth0 down": (),
    "ip -4 link set eth0 down": (), "ip link set eth0 netns other": (),
    "ip link delete eth0": (), "ip link del veth0": (), "ip addr flush dev eth0": (),
    "ip a f eth0": (), "ip address flush eth0": (), "ip addr del 10.0.0.5/24 dev eth0": (),
    "ip -6 addr flush dev eth0": (), "ifconfig eth0 down": (), "ifconfig en0 down": (),
    "ifdown eth0": (), "ifdown -a": (),
    # routes
    "ip route del default": (), "ip r d default": (), "ip -6 route del default": (),
    "ip route delete 0.0.0.0/0": (), "ip route flush table main": (),
    "ip route flush dev eth0": (), "route del default": (), "route delete default": (),
    "route -n delete default": (), "route del -net 0.0.0.0 netmask 0.0.0.0 gw 10.0.0.1": (),
    "route flush": (), "ip route add blackhole default": (),
    "ip route replace unreachable 0.0.0.0/0": (), "ip rule add prohibit": (),
    "ip ru add from all blackhole": (), "dhclient -r": (), "dhclient -x eth0": (),
    "dhcpcd -k eth0": (), "dhcpcd --release": (),
    "tc qdisc add dev eth0 root netem loss 100%": (),
    "tc qdisc change dev eth0 root netem loss random 100%": (),
    # firewalls that drop everything, or SSH
    "iptables -P INPUT DROP": (), "iptables -P OUTPUT DROP": (),
    "iptables --policy INPUT DROP": (), "ip6tables -P INPUT DROP": (),
    "iptables -t filter -P OUTPUT REJECT": (), "iptables -A INPUT -j DROP": (),
    "iptables -I OUTPUT 1 -j REJECT": (), "iptables -A INPUT -i eth0 -j DROP": (),
    "iptables -I INPUT -p tcp --dport 22 -j DROP": (),
    "iptables -A INPUT -p tcp -m multiport --dports 80,22 -j REJECT": (),
    "iptables -A INPUT -p tcp --dport ssh -j DROP": (),
    "iptables -P INPUT DROP && iptables -F": ("firewall_flush",),
    "iptables -F; iptables -P INPUT DROP": ("firewall_flush",),
    "nft add chain inet filter input '{ type filter hook input priority 0; policy drop; }'": (),
    "nft 'chain inet filter output { policy drop; }'": (),
    "nft add rule inet filter input drop": (), "nft add rule ip filter output counter reject": (),
    "ufw enable": (), "ufw --force enable": (), "ufw default deny": (),
    "ufw default deny incoming": (), "ufw default reject outgoing": (), "ufw deny ssh": (),
    "ufw deny 22/tcp": (), "ufw reject in 22": (), "ufw delete allow ssh": (),
    "ufw delete allow OpenSSH": (), "firewall-cmd --panic-on": (),
    "firewall-cmd --set-default-zone=drop": (), "firewall-cmd --set-default-zone block": (),
    "firewall-cmd --permanent --remove-service=ssh": (),
    "firewall-cmd --remove-service ssh": (), "firewall-cmd --remove-port=22/tcp": (),
    "firewall-cmd --zone=public --set-target=DROP --permanent": (),
    # services and managers
    "systemctl stop NetworkManager": ("service_control",),
    "systemctl stop networking": ("service_control",),
    "systemctl stop sshd": ("service_control",),
    "systemctl stop ssh.service": ("service_control",),
    "systemctl disable --now ssh": ("service_control",),
    "systemctl mask systemd-networkd": ("service_control",),
    "systemctl kill wpa_supplicant": ("service_control",),
    "systemctl stop wg-quick@wg0": ("service_control",),
    "service ssh stop": ("service_control",), "service networking stop": ("service_control",),
    "systemctl rescue": (), "systemctl emergency": (),
    "systemctl isolate rescue.target": ("service_control",), "init 1": (), "telinit S": (),
    "pkill sshd": ("kill_all",), "killall NetworkManager": ("kill_all",),
    "nmcli networking off": (), "nmcli n off": (), "nmcli radio all off": (),
    "nmcli radio wifi off": (), "nmcli connection down 'Wired connection 1'": (),
    "nmcli c down eth0": (), "nmcli connection delete eth0": (),
    "nmcli device disconnect eth0": (), "nmcli d dis eth0": (), "nmcli -t device down eth0": (),
    "rfkill block all": (), "rfkill block wifi": (),
    "networksetup -setairportpower en0 off": (),
    "networksetup -setnetworkserviceenabled Wi-Fi off": (),
    "tailscale down": (), "wg-quick down wg0": (),
    # behind wrappers, in code strings, quoted, through variables
    "sudo ip link set eth0 down": (), "sudo -n iptables -P INPUT DROP": (),
    "env ip link set eth0 down": (), "command ifconfig eth0 down": (),
    "bash -c 'ip route del default'": (), "sh -c \"nmcli networking off\"": (),
    "\"ip\" 'link' set eth0 \"down\"": (), "IF=eth0; ip link set $IF down": (),
    "X=down; ip link set eth0 $X": (), "timeout 5 nohup ifdown eth0": (),
    "ssh host 'sudo systemctl stop sshd'": ("service_control",),
    "echo 'ip link set eth0 down' | sudo sh": (), "eval 'ufw default deny'": (),
}


@pytest.mark.parametrize("command", sorted(LOCKOUTS))
def test_each_lockout_is_asked_with_its_key(command: str) -> None:
    keys = analyse(command, CWD)
    assert "network_lockout" in keys, keys
    assert set(LOCKOUTS[command]) <= set(keys), keys
    finding = dangerous(command, CWD)
    assert finding is not None and "network_lockout" in finding.keys
    assert any("cutting the machine off the network" in d for d in finding.descriptions)
    assert hardline(command, CWD) is None  # asked, never refused


LOOKS = (
    "ip link show", "ip link", "ip a", "ip addr show dev eth0", "ip -br link", "ip -c a",
    "ip route", "ip r", "ip route show default", "ip -6 route", "ip link set eth0 up",
    "ip link set eth0 mtu 1400", "ip addr add 10.0.0.5/24 dev eth0",
    "ip route add default via 10.0.0.1", "ip route flush cache", "ip route get 1.1.1.1",
    "ip netns list", "ip neigh", "ip route add blackhole 10.66.0.0/16", "ip rule show",
    "ip rule add from 10.0.0.0/8 table 100", "firewall-cmd --list-all",
    "firewall-cmd --get-default-zone", "firewall-cmd --panic-off",
    "firewall-cmd --add-service=http", "firewall-cmd --zone drop --list-all", "dhclient eth0",
    "dhcpcd eth0", "tc qdisc show", "tc qdisc add dev eth0 root netem delay 100ms",
    "tc qdisc add dev eth0 root netem loss 1%", "init 3", "systemctl get-default", "ifconfig", "ifconfig -a", "ifconfig eth0 up",
    "ifdown --no-act eth0", "route", "route -n", "route add default gw 10.0.0.1",
    "iptables -L", "iptables -L -n -v", "iptables -S", "iptables -nvL INPUT",
    "iptables -A INPUT -s 1.2.3.4 -j DROP", "iptables -A INPUT -p tcp --dport 8080 -j DROP",
    "iptables -A INPUT -p tcp --dport 22 -j ACCEPT", "iptables -P FORWARD DROP",
    "iptables -P INPUT", "nft list ruleset", "nft list tables",
    "nft add chain inet filter forward '{ type filter hook forward priority 0; policy drop; }'",
    "ufw status", "ufw status verbose", "ufw allow ssh", "ufw allow 22/tcp",
    "ufw default allow outgoing", "ufw default deny routed", "ufw --dry-run enable",
    "ufw app list", "systemctl status sshd", "systemctl status NetworkManager",
    "systemctl is-active ssh", "service ssh status", "systemctl start sshd",
    "nmcli general status", "nmcli device status", "nmcli connection show", "nmcli networking",
    "nmcli networking on", "nmcli radio wifi", "nmcli radio wifi on", "nmcli c up eth0",
    "nmcli dev wifi list", "rfkill list", "rfkill unblock all", "tailscale status",
    "tailscale up", "wg show", "networksetup -listallnetworkservices", "ss -tlnp",
    "ping -c1 example.com", "echo 'ip link set eth0 down'", "grep -r 'ufw enable' docs",
    "git commit -m 'iptables -P INPUT DROP'", "man ip", "pgrep sshd",
)


@pytest.mark.parametrize("command", LOOKS)
def test_looking_at_the_network_is_not_asked(command: str) -> None:
    assert analyse(command, CWD) == (), command


def test_the_firewall_keys_keep_their_meaning() -> None:
    # opening the firewall stays firewall_flush; the lock-out key is added, never swapped in
    for command in ("iptables -F", "iptables -P INPUT ACCEPT", "nft flush ruleset",
                    "ufw disable", "sudo ufw reset", "ufw default allow incoming",
                    "ufw default allow", "pfctl -d"):
        assert analyse(command, CWD) == ("firewall_flush",), command
    assert analyse("systemctl restart sshd", CWD) == ("service_control",)  # it comes back


# ------------------------------------------------------------------ run for real
def _namespace_works() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", "-rn", "ip", "link", "set", "lo", "up"],
                           capture_output=True, timeout=20)
    return probe.returncode == 0


needs_netns = pytest.mark.skipif(not _namespace_works(),
                                 reason="needs unshare -rn (a user and network namespace)")


def _state_after(command: str) -> dict[str, bool]:
    """Run ``command`` in a fresh network namespace whose loopback is up, with 127.0.0.1 and
    a default route; what is left of the three afterwards."""
    script = (f"ip link set lo up && ip route add default dev lo || exit 90\n{command}\n"
              "echo ===; ip -o link show lo; echo ===; ip -o addr show lo; echo ===; ip route")
    done = subprocess.run(["unshare", "-rn", "bash", "-c", script], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode != 90, done.stderr
    _, link, addresses, routes = done.stdout.split("===")
    return {"up": ",UP" in link or "<UP" in link, "address": "127.0.0.1" in addresses,
            "default_route": "default" in routes}


RUNNABLE = {  # command -> what it takes away
    "ip link set lo down": "up", "ip l s lo down": "up", "ip link set dev lo down": "up",
    "ifconfig lo down": "up", "env ip link set lo down": "up",
    "bash -c 'ip link set lo down'": "up", "\"ip\" 'link' set lo \"down\"": "up",
    "ip addr flush dev lo": "address", "ip a f lo": "address",
    "ip addr del 127.0.0.1/8 dev lo": "address", "ip route del default": "default_route",
    "ip r d default": "default_route", "route del default": "default_route",
    "ip route flush table main": "default_route", "ip route flush dev lo": "default_route",
}


@needs_netns
@pytest.mark.parametrize("command", sorted(RUNNABLE))
def test_each_runnable_lockout_really_cuts_and_is_asked(command: str) -> None:
    state = _state_after(command)
    assert not state[RUNNABLE[command]], f"{command!r} left {state}: the test is wrong"
    assert "network_lockout" in analyse(command, CWD)


@needs_netns
def test_the_runnable_neighbours_leave_the_network_and_stay_unasked() -> None:
    for command in ("ip link show", "ip a", "ip -br link", "ip route", "ip route show default",
                    "ip link set lo up", "ip link set lo mtu 1500", "ip route flush cache",
                    "ifconfig", "ifconfig lo up", "route -n", "ip route get 127.0.0.1"):
        state = _state_after(command)
        assert all(state.values()), f"{command!r} left {state}"
        assert analyse(command, CWD) == (), command
