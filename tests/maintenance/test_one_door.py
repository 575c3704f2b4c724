"""One door per batch (issue 28, item 6): whatever the kind of batch (the reader's ``ChangeBatch`` of one
change or many, an ``UpdateBatch``, a list of ``Update``), valid or not, under either policy and on
either local runner, ``MaintainedView.apply`` enters the validator once (``Validator.apply``: checked,
run, committed) and the runner never calls back into the view (the result is kept by ``KeptResult``).
Before, a batch entered operators/runtime/validate.py up to four times (the runner's probe, its undo,
``validate``, ``commit``) and climbed back to the view for the result."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from operators.runtime.stream import Update, batches, open_stream, write_stream
from planner.view import MaintainedView
from tests.planner.test_view_batches import CATALOG, SQL, _updates

VALIDATOR = ("operators/runtime/validate.py", "operators/runtime/validate_probe.py")
VIEW = "planner/view.py"


def doors(view: MaintainedView, batch) -> Counter:
    """The calls into the validator's modules from outside them, and into the view from outside it
    (besides ``apply`` itself), while ``view`` applies ``batch``."""
    entered: Counter = Counter()

    def profile(frame, event, arg):
        if event != "call" or frame.f_back is None:
            return
        file, caller = frame.f_code.co_filename, frame.f_back.f_code.co_filename
        if file.endswith(VALIDATOR) and not caller.endswith(VALIDATOR):
            entered["validator." + frame.f_code.co_name] += 1
        if file.endswith(VIEW) and not caller.endswith(VIEW) and frame.f_code.co_name != "apply":
            entered["view." + frame.f_code.co_name] += 1

    sys.setprofile(profile)
    try:
        view.apply(batch)
    except ValueError:
        pass  # an invalid change under 'error': the door is still one
    finally:
        sys.setprofile(None)
    return entered


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("policy", ["error", "quarantine"])
def test_every_kind_of_batch_enters_the_validator_once_and_never_climbs_back_to_the_view(tmp_path, compiled, policy):
    updates = _updates(7)[:90]
    duplicate = next(u for u in updates if u.table == "sale" and u.op == 1)
    updates.append(Update(updates[-1].seq + 1, "sale", 1, duplicate.row))
    write_stream(tmp_path, CATALOG, updates)
    kinds = {
        "one change": lambda view: list(view.batches(open_stream(tmp_path, CATALOG), 1)),
        "stream batch": lambda view: list(view.batches(open_stream(tmp_path, CATALOG), 25)),
        "UpdateBatch": lambda view: list(batches(updates, 25)),
        "list": lambda view: [list(batch) for batch in batches(updates, 25)],
    }
    for kind, sent in kinds.items():
        view = MaintainedView(SQL, CATALOG, compiled=compiled, on_invalid=policy)
        changed = 0
        for number, batch in enumerate(sent(view)):
            assert doors(view, batch) == Counter({"validator.apply": 1}), f"{kind}, batch {number}"
            changed += bool(view.kept.changes)
        assert changed and view.result(), kind  # batches that changed the result went through the door too
