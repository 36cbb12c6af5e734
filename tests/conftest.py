from __future__ import annotations

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One compute thread per worker: two workers' OpenMP pools spinning on two cores made the
    # tiny-model tests forty times slower (set before any test imports torch).
    os.environ.setdefault("OMP_NUM_THREADS", "1")

from gencoord.prior import Prior, default_prior
from gencoord.tasks import SuiteDocument, default_suites

ACTIVE_SENDER = (
    "SELF resource.obtain(q=8,item=oak_planks) > resource.deliver(q=8,item=oak_planks,to=agent_a)\n"
    "REQ agent_a craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)"
)
ACTIVE_RECEIVER = "SELF craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)\nREQ -"
STICK_INITIAL = (
    "SELF resource.obtain(q=2,item=oak_planks) > resource.deliver(q=2,item=oak_planks,to=agent_b)\n"
    "REQ agent_b craft.item(q=4,input=oak_planks,item=stick) > resource.deliver(q=4,dst=order_chest,item=stick)"
)
STICK_COUNTERED = (
    "SELF resource.obtain(q=2,item=oak_planks) > craft.item(q=4,input=oak_planks,item=stick) > "
    "resource.deliver(q=4,item=stick,to=agent_b)\nREQ agent_b resource.deliver(q=4,dst=order_chest,item=stick)"
)


EPISODES_GROUP = frozenset({"test_minecraft_episodes.py", "test_minecraft_parity.py"})
"""The modules of the second real-Minecraft group: about half the game time (their tests took 477 s, the rest 485 s)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Real-Minecraft tests first, in two groups (a server each, one per worker); then Ray's, on one worker; the
    rest spread over whichever worker is free.

    Minecraft episodes wait on the game's clock (bots walk and dig in real time), so they take
    wall time rather than CPU. Under ``pytest -n 4 --dist loadgroup`` (``make test``, two cores)
    the two groups of about equal game time start at once on two workers, while the other two
    keep the cores busy with the CPU-bound rest. Within a group a module shares its server.
    Ray's tests share one worker because each starts a local cluster; the longest groups go
    first, so none is left to run alone at the end.
    """
    for item in items:
        if item.get_closest_marker("minecraft") is not None:
            episodes = item.path.name in EPISODES_GROUP
            item.add_marker(pytest.mark.xdist_group("minecraft-episodes" if episodes else "minecraft"))
        elif item.path.name == "test_ray.py":
            item.add_marker(pytest.mark.xdist_group("ray"))
    items.sort(key=lambda item: (item.get_closest_marker("minecraft") is None, item.path.name != "test_ray.py"))


@pytest.fixture(scope="session")
def prior() -> Prior:
    return default_prior()


@pytest.fixture(scope="session")
def suites() -> SuiteDocument:
    return default_suites()
