from __future__ import annotations

import pytest

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


@pytest.fixture(scope="session")
def prior() -> Prior:
    return default_prior()


@pytest.fixture(scope="session")
def suites() -> SuiteDocument:
    return default_suites()
