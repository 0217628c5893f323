"""Drives herdr-python-sdk's typed client against a running herdr-sim.

Every method the simulator implements is called through the SDK's named
client method with the SDK's own parameter model; the SDK validates each
answer against its pydantic models (a mismatch raises), and this driver
checks the answer is the result the method is documented to give; two
refusals check Herdr's error envelope the same way. Fields
the SDK's pinned protocol-22 models do not know are listed, not failed:
later releases add fields, and the SDK keeps them in model_extra.

Usage: python conformance.py SOCKET HERDR_VERSION
Exit status 0 when every call passed, 1 otherwise.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

from pydantic import BaseModel

from herdr_sdk import HerdrClient, __version__, models as m
from herdr_sdk.errors import HerdrAPIError, HerdrError

# Methods the simulator implements that this driver cannot call through the
# SDK, and why.
SKIPPED = {
    "pane.link.resolve": "not in the SDK's protocol-22 method list (it refuses unknown methods)",
    "sim.turns": "simulator-only, not a Herdr method",
}

failures: list[str] = []
extras: dict[str, set[str]] = {}
called: list[str] = []


def unknown_fields(v: Any, path: str, out: set[str]) -> None:
    """Collects the paths of fields the SDK's models do not declare."""
    if isinstance(v, BaseModel):
        for k in (v.model_extra or {}):
            out.add(f"{path}.{k}" if path else k)
        for k in type(v).model_fields:
            unknown_fields(getattr(v, k), f"{path}.{k}" if path else k, out)
    elif isinstance(v, (list, tuple)):
        for item in v:
            unknown_fields(item, path + "[]", out)
    elif isinstance(v, dict):
        for k, item in v.items():
            unknown_fields(item, f"{path}.{k}", out)


def call(method: str, fn: Callable[..., Any], params: Any, want: type, **kw: Any) -> Any:
    """Calls fn (the SDK's client method for method) and checks the result type."""
    called.append(method)
    if fn.__name__ != method.replace(".", "_"):
        failures.append(f"{method}: driver calls {fn.__name__}")
        return None
    try:
        got = fn(params, **kw) if params is not None else fn(**kw)
    except HerdrError as e:
        cause = f" ({e.__cause__})" if e.__cause__ else ""
        failures.append(f"{method}: {type(e).__name__}: {e}{cause}")
        print(f"FAIL  {method}: {type(e).__name__}: {e}{cause}")
        return None
    if not isinstance(got, want):
        failures.append(f"{method}: got {type(got).__name__}, want {want.__name__}")
        print(f"FAIL  {method}: got {type(got).__name__}, want {want.__name__}")
        return None
    found: set[str] = set()
    unknown_fields(got, "", found)
    if found:
        extras.setdefault(method, set()).update(found)
    print(f"PASS  {method} → {type(got).__name__}")
    return got


def refused(method: str, fn: Callable[..., Any], params: Any, code: str) -> None:
    """Calls fn and checks Herdr's error envelope: the SDK raises
    HerdrAPIError with that code (a malformed envelope raises
    HerdrProtocolError instead)."""
    called.append(method)
    try:
        got = fn(params)
    except HerdrAPIError as e:
        if e.code == code:
            print(f"PASS  {method} → error {e.code}")
            return
        failures.append(f"{method}: error {e.code}, want {code}")
    except HerdrError as e:
        failures.append(f"{method}: {type(e).__name__}: {e} ({e.__cause__})")
    else:
        failures.append(f"{method}: got {type(got).__name__}, want error {code}")
    print(f"FAIL  {failures[-1]}")


def expect(cond: bool, what: str) -> None:
    if not cond:
        failures.append(what)
        print(f"FAIL  {what}")


def main() -> int:
    sock, version = sys.argv[1], sys.argv[2]
    print(f"herdr-python-sdk {__version__} against herdr-sim {version} at {sock}")
    c = HerdrClient(socket_path=sock, timeout=10)

    pong = call("ping", c.ping, None, m.PongResponse)
    if pong is not None:
        expect(pong.protocol == 22 and pong.version == version, f"ping: protocol {pong.protocol} version {pong.version}, want 22 {version}")

    # Reads.
    call("session.snapshot", c.session_snapshot, None, m.SessionSnapshotResponse)
    call("workspace.list", c.workspace_list, None, m.WorkspaceListResponse)
    call("tab.list", c.tab_list, m.TabListParams(workspace_id="w1"), m.TabListResponse)
    panes = call("pane.list", c.pane_list, m.PaneListParams(), m.PaneListResponse)
    if panes is not None:
        expect(len(panes.panes) > 0, "pane.list: no panes")
    call("pane.get", c.pane_get, m.PaneTarget(pane_id="w1:p2"), m.PaneInfoResponse)
    for source in (m.ReadSource.recent, m.ReadSource.visible):
        call("pane.read", c.pane_read, m.PaneReadParams(pane_id="w1:p2", source=source, lines=20), m.PaneReadResponse)
    call("agent.list", c.agent_list, None, m.AgentListResponse)
    call("agent.get", c.agent_get, m.AgentTarget(target="reviewer"), m.AgentInfoResponse)
    call("agent.read", c.agent_read, m.AgentReadParams(target="reviewer", source=m.ReadSource.recent), m.PaneReadResponse)
    refused("pane.get", c.pane_get, m.PaneTarget(pane_id="w9:p9"), "pane_not_found")
    refused("agent.get", c.agent_get, m.AgentTarget(target="nobody"), "agent_not_found")

    # A subscription sees the state a reporting agent sets.
    sub = call("events.subscribe", c.events_subscribe, m.EventsSubscribeParams(subscriptions=[
        m.PaneAgentStatusChangedSubscription(pane_id="w1:p3"), m.PaneCreatedSubscription()]), object, timeout=10)
    call("pane.report_agent", c.pane_report_agent, m.PaneReportAgentParams(
        pane_id="w1:p3", source="conformance", agent="pi", state=m.PaneAgentState.working, seq=1), m.OkResponse)
    if sub is not None:
        try:
            ev = next(iter(sub))
            name = getattr(ev.event, "value", ev.event)
            expect(name == "pane.agent_status_changed", f"events.subscribe: first event {name}, want pane.agent_status_changed")
            found: set[str] = set()
            unknown_fields(ev, "", found)
            if found:
                extras.setdefault("events.subscribe (event)", set()).update(found)
            print(f"PASS  events.subscribe event {name} → {type(ev).__name__}")
        except HerdrError as e:
            failures.append(f"events.subscribe: {type(e).__name__}: {e} ({e.__cause__})")
            print(f"FAIL  events.subscribe event: {e} ({e.__cause__})")
    call("agent.wait", c.agent_wait, m.AgentWaitParams(target="w1:p3", until=[m.AgentStatus.working], timeout_ms=5000), m.AgentInfoResponse)
    call("pane.report_agent", c.pane_report_agent, m.PaneReportAgentParams(
        pane_id="w1:p3", source="conformance", agent="pi", state=m.PaneAgentState.idle, seq=2), m.OkResponse)
    call("agent.rename", c.agent_rename, m.AgentRenameParams(target="w1:p3", name="conformer"), m.AgentInfoResponse)

    # Input.
    call("pane.send_text", c.pane_send_text, m.PaneSendTextParams(pane_id="w1:p4", text="echo conformance"), m.OkResponse)
    call("pane.send_keys", c.pane_send_keys, m.PaneSendKeysParams(pane_id="w1:p4", keys=["Enter"]), m.OkResponse)
    call("pane.send_input", c.pane_send_input, m.PaneSendInputParams(pane_id="w1:p4", text="ls", keys=["Enter"]), m.OkResponse)
    call("agent.send_keys", c.agent_send_keys, m.AgentSendKeysParams(target="reviewer", keys=["Escape"]), m.OkResponse)
    # A screen-detected agent (reviewer, Codex) goes working when prompted;
    # a self-reporting one (conformer) changes only by its own reports.
    call("agent.prompt", c.agent_prompt, m.AgentPromptParams(target="reviewer", text="conformance check",
         wait=m.AgentPromptWaitOptions(until=[m.AgentStatus.working], timeout_ms=10000)), m.AgentPromptedResponse)
    call("agent.prompt", c.agent_prompt, m.AgentPromptParams(target="conformer", text="no wait"), m.AgentPromptedResponse)
    # The reporter gives the agent up; a detected Pi process keeps it.
    call("pane.release_agent", c.pane_release_agent, m.PaneReleaseAgentParams(
        pane_id="w1:p3", source="conformance", agent="pi", seq=3), m.OkResponse)
    still = call("agent.get", c.agent_get, m.AgentTarget(target="conformer"), m.AgentInfoResponse)
    if still is not None:
        expect(still.agent.agent == "pi", f"agent.get after pane.release_agent: agent {still.agent.agent}, want pi")

    # Layout and start.
    split = call("pane.split", c.pane_split, m.PaneSplitParams(target_pane_id="w1:p4", direction=m.SplitDirection.right), m.PaneInfoResponse)
    tab = call("tab.create", c.tab_create, m.TabCreateParams(workspace_id="w1", label="conformance"), m.TabCreatedResponse)
    if split is not None:
        new = split.pane.pane_id
        call("agent.start", c.agent_start, m.AgentStartParams(kind="claude", name="starter", pane_id=new), m.AgentStartedResponse, timeout=30)
        call("pane.move", c.pane_move, m.PaneMoveParams(pane_id=new, destination=m.PaneMoveDestination2(workspace_id="w1", label="moved")), m.PaneMoveResponse)
        call("pane.close", c.pane_close, m.PaneTarget(pane_id=new), m.OkResponse)
    if tab is not None:
        expect(tab.tab.workspace_id == "w1", f"tab.create: workspace {tab.tab.workspace_id}")

    call("server.stop", c.server_stop, None, m.OkResponse)
    c.close()

    for method, fields in sorted(extras.items()):
        print(f"note  {method}: fields the SDK's protocol-22 models do not declare: {', '.join(sorted(fields))}")
    for method, why in SKIPPED.items():
        print(f"skip  {method}: {why}")
    print(f"{len(called)} calls, {len(set(called))} methods, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
