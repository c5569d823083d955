import pytest

from kafkabench.labs.monitor.report import window_tables
from kafkabench.labs.monitor.screen import Screens


def broker(state="up", state_for_s=1.0, sent=2, received=2, lost=0, failed=0):
    return {"sent": sent, "acked": sent, "received": received, "lost": lost, "failed": failed, "duplicated": 0,
            "out_of_order": 0, "availability": 1.0 if state == "up" else None,
            "roundtrip_p50_ms": 1.2 if received else None, "roundtrip_p99_ms": 2.5 if received else None,
            "state": state, "state_for_s": state_for_s, "since_probe_leader_s": 0.0}


def window(t_s, brokers, groups=None, prober=("running", 0)):
    return {"t_s": t_s, "brokers": brokers, "groups": groups or {},
            "parts": {"prober": {"state": prober[0], "restarts": prober[1]},
                      "lag": {"state": "running", "restarts": 0}}}


def group(status):
    return {"lag": 10, "lag_seconds": 0.5, "lag_seconds_at_least": False, "status": status, "members": 1}


def test_a_broker_first_seen_gets_a_line_then_only_changes_do():
    screens = Screens()
    lines = [screens.next(window(0.5, {"1": broker(), "2": broker()})).lines,
             screens.next(window(1.0, {"1": broker(), "2": broker()})).lines,
             screens.next(window(1.5, {"1": broker(), "2": broker("fenced", 0.4, received=0, lost=2)})).lines,
             screens.next(window(2.0, {"1": broker(), "2": broker("fenced", 0.9, sent=0, received=0)})).lines,
             screens.next(window(2.5, {"1": broker(), "2": broker("not answering", 0.2, sent=0, received=0)})).lines,
             screens.next(window(3.0, {"1": broker(), "2": broker("up", 0.1)})).lines,
             screens.next(window(3.5, {"1": broker("unknown", None)})).lines]
    assert lines == [["t=0.5 s  broker 1: up", "t=0.5 s  broker 2: up"],
                     [],
                     ["t=1.5 s  broker 2: up -> down (fenced)"],
                     [],
                     ["t=2.5 s  broker 2: down (fenced) -> down (not answering)"],
                     ["t=3.0 s  broker 2: down (not answering) -> up"],
                     ["t=3.5 s  broker 1: up -> unknown", "t=3.5 s  broker 2: up -> no longer reported"]]


@pytest.mark.parametrize("state, for_s, cell", [("up", 12.0, "up"), ("fenced", 12.4, "fenced 12 s ago"),
                                                ("not answering", 5.0, "no answer 5 s"),
                                                ("not answering", 600.0, "no answer 10 min"),
                                                ("not answering", 9000.0, "no answer 2 h"),
                                                ("fenced", None, "fenced"), ("unknown", None, "-")])
def test_the_state_column_says_whether_a_broker_is_up_and_since_when_it_is_down(state, for_s, cell):
    table = Screens().next(window(1.0, {"2": broker(state, for_s, sent=0, received=0)})).tables[0]
    assert [c.name for c in table.columns[:2]] == ["broker", "state"]
    assert table.rows[0].cells[:2] == ["2", cell]
    assert table.rows[0].kind == ("error" if state in ("fenced", "not answering") else "")


def test_the_tables_are_the_window_tables_brokers_then_groups():
    w = window(1.0, {"1": broker()}, {"g1": group("OK")})
    tables = Screens().next(w).tables
    assert tables == window_tables(w)
    assert [[c.name for c in t.columns][:2] for t in tables] == [["broker", "state"], ["group", "status"]]
    assert Screens().next(window(1.0, {"1": broker()})).tables == window_tables(window(1.0, {"1": broker()}))[:1]


def test_a_part_of_the_monitor_gets_a_row_once_it_restarted_in_red_while_it_restarts():
    assert len(Screens().next(window(1.0, {"1": broker()})).tables) == 1  # every part running, none restarted
    parts = Screens().next(window(1.0, {"1": broker()}, prober=("restarting", 2))).tables[-1]
    assert [(row.cells, row.kind) for row in parts.rows] == [(["prober", "restarting", "2"], "error")]
    parts = Screens().next(window(1.0, {"1": broker()}, prober=("running", 2))).tables[-1]
    assert [(row.cells, row.kind) for row in parts.rows] == [(["prober", "running", "2"], "sub")]


def test_the_minute_summary_sums_exactly_the_windows_of_that_minute():
    screens = Screens()
    summaries = []
    for i in range(1, 241):  # 0.5 s windows over two minutes, t a little late as a monotonic clock has it
        t_s = i * 0.5 + 0.003
        second_minute = t_s > 60.003
        brokers = {"1": broker(sent=3, received=3), "2": broker(sent=1, received=1),
                   "3": (broker("fenced", t_s - 20, sent=1, received=0, lost=1) if i == 120 else
                         broker("fenced", t_s - 20, sent=0, received=0) if t_s > 20 else broker())}
        if second_minute:
            brokers["3"] = broker("up", t_s - 60, sent=2, received=2 - (i == 200), failed=int(i == 200))
        groups = {"g1": group("OK"), "g2": group("OK"), "g3": group("STOP")}
        lines = screens.next(window(t_s, brokers, groups, prober=("running", 1 if second_minute else 0))).lines
        summaries += [line for line in lines if "brokers:" in line]
    # the first minute is windows 1..120 (window 120, at t=60.003, closes it): 3 + 1 probes each, 2 more in the 39
    # windows before broker 3 is fenced at t=20, and the 1 it lost in window 120
    first_sent = 120 * 4 + 39 * 2 + 1
    assert summaries == [
        f"t=60.0 s  brokers: 2 up, 1 down (3: fenced 40 s ago); last minute: {first_sent} probes sent, "
        f"{first_sent - 1} read back, 1 lost, 0 failed; groups: 2 OK, 1 STOP",
        "t=120.0 s  brokers: 3 up; last minute: 720 probes sent, 719 read back, 0 lost, 1 failed; "
        "groups: 2 OK, 1 STOP; restarts since the start: prober 1"]


def test_a_watch_that_stalled_says_how_long_its_summary_covers():
    screens = Screens()
    screens.next(window(30.0, {"1": broker()}))
    lines = screens.next(window(150.0, {"1": broker()})).lines
    assert lines == ["t=150.0 s  brokers: 1 up; last 150 s: 4 probes sent, 4 read back, 0 lost, 0 failed"]
    assert screens.next(window(180.0, {"1": broker()})).lines == [
        "t=180.0 s  brokers: 1 up; last 30 s: 2 probes sent, 2 read back, 0 lost, 0 failed"]
