"""Element-by-element comparison of an IDAP response with a document printed in seed 004."""

from __future__ import annotations

from lxml import etree


def _elements(el: etree._Element) -> list[etree._Element]:
    return [c for c in el if isinstance(c.tag, str)]


def _name(el: etree._Element) -> str:
    return etree.QName(el).localname


def assert_matches(expected: etree._Element, actual: etree._Element, *, variable: tuple[str, ...] = (),
                   extra_ok: tuple[str, ...] = (), unordered: tuple[str, ...] = (),
                   replace: dict[str, str] | None = None, path: str = "") -> None:
    """``actual`` has the elements of ``expected``: same namespace and name, same text
    (whitespace-trimmed) for leaves, same children in the same order.

    ``variable``: names whose text differs by nature (message ids, dates of today);
    ``extra_ok``: names ``actual`` may have in addition (e.g. ``delay``, which the
    seed prints in one response and not in another); ``unordered``: names whose
    children are compared as a set (the seed prints them in an order its own schema
    does not allow); ``replace``: expected text -> the text this test sent instead.
    """
    here = f"{path}/{_name(expected)}"
    assert etree.QName(actual).text == etree.QName(expected).text, \
        f"{here}: expected {etree.QName(expected).text}, got {etree.QName(actual).text}"
    exp_children, act_children = _elements(expected), _elements(actual)
    if not exp_children:
        assert not act_children, f"{here}: unexpected children {[_name(c) for c in act_children]}"
        if _name(expected) not in variable:
            want = (expected.text or "").strip()
            want = (replace or {}).get(want, want)
            assert (actual.text or "").strip() == want, \
                f"{here}: expected text {want!r}, got {(actual.text or '').strip()!r}"
        return
    exp_names = {_name(c) for c in exp_children}
    act_children = [c for c in act_children if _name(c) in exp_names or _name(c) not in extra_ok]
    if _name(expected) in unordered:
        exp_children = sorted(exp_children, key=_name)
        act_children = sorted(act_children, key=_name)
    assert [_name(c) for c in act_children] == [_name(c) for c in exp_children], \
        f"{here}: children {[_name(c) for c in act_children]} != {[_name(c) for c in exp_children]}"
    for e, a in zip(exp_children, act_children, strict=True):
        assert_matches(e, a, variable=variable, extra_ok=extra_ok, unordered=unordered,
                       replace=replace, path=here)
