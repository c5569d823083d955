from dataclasses import dataclass, field

from kafkabench.cli.ray import _say_who_can_connect
from kafkabench.on_ray.local_cluster import OpenPort

LOOPBACK = [OpenPort("::ffff:127.0.0.1", 40001, "gcs_server"), OpenPort("127.0.0.1", 40002, "raylet")]


@dataclass
class Cluster:
    ports: list[OpenPort] = field(default_factory=lambda: LOOPBACK)
    token_file: str = ""
    address: str = "127.0.0.1:40001"

    def open_ports(self) -> list[OpenPort]:
        return self.ports


def said(capsys, cluster, insecure: bool = False) -> list[str]:
    _say_who_can_connect(cluster, insecure)
    return capsys.readouterr().err.splitlines()


def test_a_cluster_with_its_token_on_loopback_says_so_in_two_lines(capsys, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    assert said(capsys, Cluster(token_file="/state/ray/auth_token")) == [
        "Ray listens on loopback only: 2 ports of 127.0.0.1 (gcs_server, raylet)",
        "token authentication on: its token is in /state/ray/auth_token (mode 0600), which kafkabench finds for "
        "127.0.0.1:40001; `kafkabench ray down` removes it"]


def test_no_token_is_a_warning_naming_who_can_connect(capsys, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    assert said(capsys, Cluster(), insecure=True)[1] == (
        "warning: token authentication off (--insecure): any process of this machine can connect a driver and run "
        "code as you")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    exposed = Cluster(ports=[*LOOPBACK, OpenPort("0.0.0.0", 44217, "python")])
    assert said(capsys, exposed) == [
        "warning: Ray listens beyond loopback: 0.0.0.0:44217 (python)",
        "warning: token authentication off (RAY_AUTH_MODE=disabled is set here): any host that reaches those ports "
        "can connect a driver and run code as you"]


def test_the_users_own_token_mode_is_left_to_them(capsys, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert said(capsys, Cluster())[1].startswith("token authentication as RAY_AUTH_MODE=token says, with your own token")
