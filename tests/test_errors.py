"""The one error tree's messages (src/sluice/errors.py): an ORA code raised with a detail
keeps it, whether or not its catalogue text has a place for it -- Oracle appends details
after the standard text too (ORA-03113's process and session), and a pipeline's LAST_ERROR
said only "end-of-file on communication channel" for "the session holding its leases was
lost"."""

from __future__ import annotations

from sluice.errors import _CATALOG, ora, places


def test_every_code_keeps_a_detail_its_text_has_no_place_for():
    dropped = []
    for code in _CATALOG:
        args = [f"ARG{n}" for n in range(places(code))]
        message = str(ora(code, *args, "THE-DETAIL"))
        if "THE-DETAIL" not in message or any(a not in message for a in args):
            dropped.append((code, message))
    assert dropped == []


def test_ora_03113_keeps_why_the_session_ended():
    e = ora(3113, "pipeline P: the session holding its leases was lost")
    assert str(e) == ("ORA-03113: end-of-file on communication channel: "
                      "pipeline P: the session holding its leases was lost")
    assert e.code == 3113 and e.full_code == "ORA-03113"
    # without one, and with the details a text has places for, as before
    assert str(ora(3113)) == "ORA-03113: end-of-file on communication channel"
    assert str(ora(942, "HR.T")) == "ORA-00942: table or view does not exist: HR.T"
    assert str(ora(932, "NUMBER", "DATE")) == "ORA-00932: inconsistent datatypes: expected NUMBER got DATE"
